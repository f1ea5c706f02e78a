"""A claim written as the pages show it, ``namespace/name``, is found in that namespace only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import ResourceClaim

pytestmark = pytest.mark.django_db


def test_namespace_slash_full_name_opens_the_claim(client_in, demo_clusters):
    claim = ResourceClaim.objects.select_related("cluster").exclude(namespace="").order_by("pk").last()
    resp = client_in.get(reverse("inventory:search"), {"q": f" {claim.namespace}/{claim.name} "})
    assert resp.status_code == 302 and resp["Location"] == claim.get_absolute_url()


def test_namespace_slash_partial_name_leaves_out_other_namespaces(client_in, demo_clusters):
    claims = list(ResourceClaim.objects.all())
    # The first word of a claim name held by several claims of one namespace and by a claim of another.
    by_word: dict[str, dict[str, int]] = {}
    for c in claims:
        ns_counts = by_word.setdefault(c.name.split("-")[0], {})
        ns_counts[c.namespace] = ns_counts.get(c.namespace, 0) + 1
    word, ns = next((w, ns) for w, counts in sorted(by_word.items()) if len(counts) > 1
                    for ns, n in sorted(counts.items()) if n > 1)  # fmt: skip
    want = sorted(c.name for c in claims if c.namespace == ns and word in c.name)
    resp = client_in.get(reverse("inventory:search"), {"q": f"{ns}/{word}"})
    assert resp.status_code == 200
    group = next(g for g in resp.context["result"].groups if g.kind == "claim")
    assert sorted(c.name for c in group.objects) == want and group.count == len(want)
    assert any(c.namespace != ns and word in c.name for c in claims)
    assert "namespace=" + ns in group.see_all
