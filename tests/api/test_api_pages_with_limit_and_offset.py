"""API lists page with ``limit``/``offset``: counts, next links and no row twice or missing."""

from __future__ import annotations

import pytest

from inventory.models import Device

pytestmark = pytest.mark.django_db


def test_walking_the_pages_returns_every_device_once(api, fleet):
    url, seen = "/api/inventory/devices/?limit=7", []
    while url:
        body = api.get(url).json()
        seen += [d["id"] for d in body["results"]]
        assert len(body["results"]) <= 7
        url = body["next"]
    assert sorted(seen) == sorted(Device.objects.values_list("pk", flat=True))
    assert len(seen) == len(set(seen)) == body["count"]


def test_a_limit_above_the_maximum_is_capped(api, fleet):
    body = api.get("/api/inventory/devices/", {"limit": 100000}).json()
    assert len(body["results"]) == min(1000, Device.objects.count())


def test_the_default_page_is_fifty_rows(api, fleet):
    body = api.get("/api/inventory/devices/").json()
    assert body["count"] == Device.objects.count() > 50
    assert len(body["results"]) == 50 and body["next"]
