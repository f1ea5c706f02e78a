"""An unknown address or an object a later sync deleted gets a 404 page in the dashboard's own
layout (navigation, search), with the path escaped."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_an_unknown_path_is_a_404_with_navigation(client_in):
    resp = client_in.get("/clusters/nope/nodes/<script>x/")
    assert resp.status_code == 404
    html = resp.content.decode()
    assert "Not found" in html and 'href="/claims/stuck/"' in html
    assert "<script>x" not in html and "&lt;script&gt;x" in html


def test_a_deleted_device_is_a_404_with_navigation(client_in):
    resp = client_in.get("/devices/999999/")
    assert resp.status_code == 404 and "search box" in resp.content.decode()
