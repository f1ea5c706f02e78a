"""Claims and findings in the API: a claim's allocation, consumers and open findings as stored;
``?open=true`` findings are the stuck queue, in its order."""

from __future__ import annotations

import pytest
from django.urls import reverse

from claims.models import Finding
from inventory.models import ResourceClaim

pytestmark = pytest.mark.django_db


def test_a_claim_lists_its_results_reservations_and_open_findings(api, fleet):
    # pk__in, not .distinct(): PostgreSQL has no equality for the json raw column.
    claims = ResourceClaim.objects.filter(pk__in=ResourceClaim.objects.filter(results__isnull=False).values("pk"))
    assert claims.exists()
    for claim in claims:
        body = api.get(f"/api/claims/claims/{claim.pk}/").json()
        assert (body["namespace"], body["name"], body["state"]) == (claim.namespace, claim.name, claim.state)
        assert sorted(r["device_name"] for r in body["results"]) == sorted(claim.results.values_list("device_name", flat=True))
        assert sorted(r["uid"] for r in body["reserved_for"]) == sorted(claim.reservations.values_list("uid", flat=True))
        assert {f["id"] for f in body["open_findings"]} == set(
            Finding.objects.open().filter(claim=claim).values_list("pk", flat=True))
        assert body["page"] == claim.get_absolute_url()


def test_claim_filters_are_the_claims_list_pages(api, fleet):
    claim = ResourceClaim.objects.order_by("pk").first()
    body = api.get("/api/claims/claims/", {"namespace": claim.namespace, "cluster": claim.cluster.name}).json()
    assert body["count"] == ResourceClaim.objects.filter(namespace=claim.namespace, cluster=claim.cluster).count()
    assert claim.pk in {c["id"] for c in body["results"]}


def test_open_findings_are_the_stuck_queue_in_its_order(api, client_in, fleet):
    assert Finding.objects.open().count() > 2
    api_rows = [f["id"] for f in api.get("/api/claims/findings/", {"open": "true"}).json()["results"]]
    page_rows = [f.pk for f in client_in.get(reverse("claims:stuck")).context["findings"]]
    assert api_rows == page_rows


def test_a_finding_links_its_filled_runbook(api, fleet):
    f = Finding.objects.open().order_by("pk").first()
    body = api.get(f"/api/claims/findings/{f.pk}/").json()
    assert body["runbook"] == f"{reverse('claims:runbook', args=[f.category])}?finding={f.pk}"
    assert body["category"] == f.category and body["involved"] == f.involved
