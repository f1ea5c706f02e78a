"""A search that overflows every group runs a fixed number of queries (one per kind, one
count per overflowing kind) and caps each group, linking to the full filtered list."""

from __future__ import annotations

import pytest
from django.db.models import Q
from django.urls import reverse

from inventory.models import Device, Node, Pod, ResourceClaim
from inventory.search import LIMIT

pytestmark = pytest.mark.django_db


def test_a_broad_term_is_capped_per_group_in_few_queries(client_in, demo_clusters, django_assert_max_num_queries):
    term = "gpu"  # in GPU UUIDs, generated claim names, driver pod names and node names
    counts = {
        "device": Device.objects.filter(Q(uuid__icontains=term) | Q(parent_uuid__icontains=term)).count(),
        "claim": ResourceClaim.objects.filter(name__icontains=term).count(),
        "pod": Pod.objects.filter(name__icontains=term).count(),
        "node": Node.objects.filter(Q(name__icontains=term) | Q(gpu_product__icontains=term)).count(),
    }
    assert counts["device"] > LIMIT and counts["claim"] > LIMIT
    # The page's own (session, user, the header's open-findings count), 5 searches, a count
    # for each kind with more than LIMIT matches: at most 3 + 5 + 5, however large the fleet.
    with django_assert_max_num_queries(13):
        resp = client_in.get(reverse("inventory:search"), {"q": term})
    assert resp.status_code == 200
    groups = {g.kind: g for g in resp.context["result"].groups}
    for kind, n in counts.items():
        assert groups[kind].count == n and len(groups[kind].objects) == min(n, LIMIT)
    html = resp.content.decode()
    assert 'href="/devices/?q=gpu"' in html and 'href="/claims/?q=gpu"' in html
