"""Syncing each shared case folder through the real sync path stores its expected finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import CASE_DIRS, cluster_name, expected, expected_category

from claims.models import ClaimTransition, Finding
from inventory.models import ResourceClaim

pytestmark = pytest.mark.django_db


def test_case_folders_are_discovered():
    assert len(CASE_DIRS) >= 17


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_sync_stores_the_expected_finding(case: Path, sync_snapshot):
    run = sync_snapshot(case / "snapshot", name=cluster_name(case))
    assert run.status in ("ok", "partial"), run.error
    want = expected_category(case)
    stored = list(Finding.objects.filter(cluster=run.cluster))
    categories = {f.category for f in stored}
    forbidden = set(expected(case).get("must_not_diagnose") or [])
    assert not forbidden & categories
    if want == "none":
        assert stored == []
        return
    assert want in categories, f"expected {want}, stored {sorted(categories)}"
    for f in stored:
        assert f.resolved_at is None
        assert f.first_seen == f.last_seen
        assert f.involved and f.involved[0] == {"kind": f.kind, "namespace": f.namespace or None, "name": f.name}
        if f.claim_id is not None:
            claim = ResourceClaim.objects.get(pk=f.claim_id)
            assert {"kind": "ResourceClaim", "namespace": claim.namespace, "name": claim.name} in f.involved
    # Every new finding is also a transition row.
    appeared = ClaimTransition.objects.filter(cluster=run.cluster, field="finding", old="")
    assert appeared.count() == len(stored)


def test_snapshot_clusters_are_diagnosed_at_the_snapshot_time(sync_snapshot):
    case = next(c for c in CASE_DIRS if expected_category(c) == "capacity_exhausted")
    run = sync_snapshot(case / "snapshot", name="snap")
    f = Finding.objects.get(cluster=run.cluster, category="capacity_exhausted")
    # The snapshot is from the past: the diagnosis used its own newest timestamp, not the clock.
    assert f.first_seen.year < 2100 and f.since is not None and f.since <= f.first_seen
    assert (f.first_seen - f.since).total_seconds() < 24 * 3600
