"""The API answers scripts with a token and browsers with a session, and nobody else."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
URLS = ["/api/", "/api/schema/", "/api/inventory/clusters/", "/api/inventory/nodes/", "/api/inventory/devices/",
        "/api/inventory/device-classes/", "/api/inventory/resource-slices/", "/api/claims/claims/", "/api/claims/findings/", "/api/migration/readiness/", "/api/migration/plan/?cluster=x"]


@pytest.mark.parametrize("url", URLS)
def test_anonymous_requests_get_401_with_the_token_scheme(url):
    resp = APIClient().get(url)
    assert resp.status_code == 401
    assert resp["WWW-Authenticate"] == "Token"


def test_a_wrong_token_is_refused(token):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert c.get("/api/inventory/clusters/").status_code == 401


def test_a_token_of_an_inactive_user_is_refused(api, viewer):
    viewer.is_active = False
    viewer.save()
    assert api.get("/api/inventory/clusters/").status_code == 401


def test_a_token_reads_every_list(api, fleet):
    for url in URLS[2:-1]:
        resp = api.get(url)
        assert resp.status_code == 200, url
        assert resp["Content-Type"] == "application/json"
        assert resp.json()["count"] > 0, url


def test_a_logged_in_browser_reads_with_its_session(client_in, fleet):
    resp = client_in.get("/api/inventory/nodes/", HTTP_ACCEPT="application/json")
    assert resp.status_code == 200 and resp.json()["count"] > 0


def test_the_api_is_read_only(api, fleet):
    from inventory.models import Node

    node = Node.objects.order_by("pk").first()
    assert api.post("/api/inventory/nodes/", {"name": "x"}).status_code == 405
    assert api.delete(f"/api/inventory/nodes/{node.pk}/").status_code == 405
    assert api.patch(f"/api/inventory/nodes/{node.pk}/", {"name": "x"}).status_code == 405
    assert Node.objects.filter(pk=node.pk, name=node.name).exists()


def test_the_root_lists_every_endpoint(api):
    body = api.get("/api/").json()
    for key in ("clusters", "nodes", "devices", "device-classes", "resource-slices", "claims", "findings", "readiness",
                "plan", "schema"):
        assert body[key].startswith("http://testserver/api/"), key
