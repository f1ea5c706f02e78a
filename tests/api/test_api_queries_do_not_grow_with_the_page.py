"""Every API list runs a fixed number of queries: a page of 200 rows costs what a page of 2 does."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db
LISTS = {
    # token, count, page, then what the page hook or the prefetches add
    "/api/inventory/clusters/": 5,
    "/api/inventory/nodes/": 3,
    "/api/inventory/devices/": 6,
    "/api/claims/claims/": 6,
    "/api/claims/findings/": 3,
    "/api/migration/readiness/": 3,
}


def _count(api, url, **params) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert api.get(url, params).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("url", LISTS)
def test_a_list_costs_the_same_queries_for_2_or_200_rows(api, fleet, url):
    small, large = _count(api, url, limit=2), _count(api, url, limit=200)
    assert small <= large <= LISTS[url]  # a page with no holders skips their queries


def test_a_device_page_spanning_every_cluster_holds_its_holders_in_three_queries(api, fleet, django_assert_max_num_queries):
    from inventory.models import Device

    assert Device.objects.values("cluster").distinct().count() > 3
    with django_assert_max_num_queries(6):
        body = api.get("/api/inventory/devices/", {"limit": 1000}).json()
    assert len({d["cluster"] for d in body["results"]}) > 3
