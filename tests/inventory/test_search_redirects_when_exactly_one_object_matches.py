"""The header search goes straight to the object when exactly one matches in all kinds and
clusters; with two or more it shows the grouped list instead."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Device, Node, Pod, ResourceClaim

pytestmark = pytest.mark.django_db


def _matches(term: str) -> int:
    t = term.lower()
    return (sum(t in d.uuid.lower() or t in d.parent_uuid.lower() for d in Device.objects.all())
            + sum(t in o.name.lower() for m in (ResourceClaim, Pod, Node) for o in m.objects.all()))  # fmt: skip


def test_one_match_redirects_and_two_matches_do_not(client_in, demo_clusters):
    # A claim generated for a pod: its full name is unique, without the generated suffix it
    # is the pod's name (and its siblings').
    claim = next(c for c in ResourceClaim.objects.select_related("cluster").order_by("pk")
                 if _matches(c.name) == 1 and _matches(c.name.rsplit("-", 2)[0]) > 1)  # fmt: skip
    resp = client_in.get(reverse("inventory:search"), {"q": claim.name})
    assert resp.status_code == 302 and resp["Location"] == claim.get_absolute_url()
    shorter = claim.name.rsplit("-", 2)[0]
    resp = client_in.get(reverse("inventory:search"), {"q": shorter})
    assert resp.status_code == 200 and resp.context["result"].total == _matches(shorter)
