"""Every age on a page is measured to one moment per cluster: for a snapshot, its own clock
(the newest diagnosis time stored for it), so the finding's "for 47 min" and the lifecycle
panel's "ago" on the same claim page agree; for a live cluster, now."""

from __future__ import annotations

import pytest
from django.db.models import Max
from django.urls import reverse
from store_helpers import CASES

from claims.models import Finding
from inventory.models import Cluster, SourceKind
from inventory.templatetags.claimscope import age

pytestmark = pytest.mark.django_db
DELETING = CASES / "claims-stuck-deleting-delete-protection/snapshot"


def test_a_snapshot_claim_page_measures_every_age_to_the_snapshot_clock(client_in, sync_snapshot):
    sync_snapshot(DELETING, name="deleting")
    f = Finding.objects.open().filter(claim__isnull=False).select_related("claim").first()
    claim = f.claim
    clock = Finding.objects.filter(cluster=f.cluster).aggregate(t=Max("last_seen"))["t"]
    resp = client_in.get(claim.get_absolute_url())
    assert resp.context["now"] == clock
    assert {x.age_at for x in resp.context["open_findings"]} == {clock}
    body = resp.content.decode()
    assert f"({age(claim.created, clock)} ago)" in body
    if claim.deletion_timestamp:
        assert f"({age(claim.deletion_timestamp, clock)} ago)" in body
    listed = client_in.get(reverse("claims:list"), {"cluster": "deleting"}).context["claims"]
    assert {c.age_at for c in listed} == {clock}


def test_a_live_cluster_is_measured_to_now(client_in, sync_snapshot):
    sync_snapshot(DELETING, name="deleting")
    Cluster.objects.filter(name="deleting").update(source_kind=SourceKind.IN_CLUSTER)
    f = Finding.objects.open().filter(claim__isnull=False).select_related("claim").first()
    resp = client_in.get(f.claim.get_absolute_url())
    assert resp.context["now"] > Finding.objects.aggregate(t=Max("last_seen"))["t"]
