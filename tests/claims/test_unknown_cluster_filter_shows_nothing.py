"""A pasted link naming a cluster that does not exist shows nothing and says why, instead of
silently showing every cluster's claims."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import CASES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url_name", ["claims:list", "claims:stuck"])
def test_an_unknown_cluster_shows_an_empty_list_with_the_reason(client_in, sync_snapshot, url_name):
    sync_snapshot(CASES / "capacity-exhausted-all-gpus-allocated/snapshot", name="real")
    known = client_in.get(reverse(url_name), {"cluster": "real"})
    assert known.context["page"].paginator.count > 0
    resp = client_in.get(reverse(url_name), {"cluster": "doesnotexist"})
    assert resp.status_code == 200
    assert resp.context["page"].paginator.count == 0
    assert "Select a valid choice" in resp.content.decode()
