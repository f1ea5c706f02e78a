"""The header search finds pods by name or ``namespace/name``, and opens the pod page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Pod, ResourceClaim

pytestmark = pytest.mark.django_db


def _pod_without_claim_named_like_it():
    """A pod whose name no claim name and no other pod name contains (a pod that uses a
    shared claim rather than one generated from a template)."""
    claims = list(ResourceClaim.objects.values_list("name", flat=True))
    pods = list(Pod.objects.select_related("cluster"))
    for p in pods:
        if not any(p.name in c for c in claims) and sum(p.name in o.name for o in pods) == 1:
            return p
    raise AssertionError("no pod name is unique in the demo")


def test_a_pod_name_opens_the_pod_page(client_in, demo_clusters):
    pod = _pod_without_claim_named_like_it()
    url = reverse("claims:pod", args=[pod.cluster.name, pod.namespace, pod.name])
    resp = client_in.get(reverse("inventory:search"), {"q": pod.name})
    assert resp.status_code == 302 and resp["Location"] == url
    assert client_in.get(url).status_code == 200
    resp = client_in.get(reverse("inventory:search"), {"q": f"{pod.namespace}/{pod.name}"})
    assert resp.status_code == 302 and resp["Location"] == url


def test_a_pod_name_lists_the_pod_next_to_the_claims_generated_from_it(client_in, demo_clusters):
    claims = list(ResourceClaim.objects.values_list("name", flat=True))
    pod = next(p for p in Pod.objects.select_related("cluster").order_by("pk") if any(p.name in c for c in claims))
    resp = client_in.get(reverse("inventory:search"), {"q": pod.name})
    assert resp.status_code == 200
    groups = {g.kind: g for g in resp.context["result"].groups}
    assert pod.pk in [p.pk for p in groups["pod"].objects]
    assert sorted(c.name for c in groups["claim"].objects) == sorted(c for c in claims if pod.name in c)
    assert reverse("claims:pod", args=[pod.cluster.name, pod.namespace, pod.name]) in resp.content.decode()
