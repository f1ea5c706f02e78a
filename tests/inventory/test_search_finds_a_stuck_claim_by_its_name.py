"""The header search finds ResourceClaims by name: the full generated name of a stuck claim
opens it, and a shared prefix lists every claim that has it, grouped with a count."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import ClaimState, ResourceClaim

pytestmark = pytest.mark.django_db


def test_the_full_name_of_a_pending_claim_opens_its_page(client_in, demo_clusters):
    stuck = ResourceClaim.objects.filter(state=ClaimState.PENDING).order_by("pk").first()
    assert stuck is not None, "the demo has pending claims"
    resp = client_in.get(reverse("inventory:search"), {"q": stuck.name})
    assert resp.status_code == 302 and resp["Location"] == stuck.get_absolute_url()
    assert client_in.get(resp["Location"]).status_code == 200


def test_a_name_prefix_lists_every_claim_with_it_and_links_each(client_in, demo_clusters):
    # The generated part of a claim name (pod name + request name) is shared by its siblings.
    names = list(ResourceClaim.objects.values_list("name", flat=True))
    prefix = max({n.rsplit("-", 3)[0] for n in names}, key=lambda p: sum(p in n for n in names))
    want = sorted((c.namespace, c.name, c.get_absolute_url()) for c in ResourceClaim.objects.select_related("cluster")
                  if prefix.lower() in c.name.lower())  # fmt: skip
    assert len(want) > 1
    resp = client_in.get(reverse("inventory:search"), {"q": prefix.upper()})
    assert resp.status_code == 200
    claims = next(g for g in resp.context["result"].groups if g.kind == "claim")
    assert claims.count == len(want)
    assert sorted((c.namespace, c.name, c.url) for c in claims.objects) == want
    html = resp.content.decode()
    for _, _, url in want:
        assert f'href="{url}"' in html
