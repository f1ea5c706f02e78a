"""Findings the diagnosis stops reporting are resolved (not deleted), with a transition row."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_helpers import CASE_DIRS, expected_category

from claims.models import ClaimTransition, Finding
from claims.store import diagnose_cluster, record_diagnosis

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(sync_snapshot):
    case = next(c for c in CASE_DIRS if expected_category(c) == "reserved_for_missing_pod")
    run = sync_snapshot(case / "snapshot", name="orphan", hooks=False)
    findings, now = diagnose_cluster(run.cluster)
    record_diagnosis(run.cluster, findings, now)
    return run.cluster, findings, now


def test_a_finding_no_longer_reported_gets_resolved_at(stored):
    cluster, findings, now = stored
    open_before = Finding.objects.open().filter(cluster=cluster).count()
    assert open_before == len(findings) > 0
    later = now + timedelta(minutes=5)
    counts = record_diagnosis(cluster, [], later)
    assert counts.resolved == open_before and counts.created == 0
    assert not Finding.objects.open().filter(cluster=cluster).exists()
    assert set(Finding.objects.filter(cluster=cluster).values_list("resolved_at", flat=True)) == {later}
    resolved = ClaimTransition.objects.filter(cluster=cluster, field="finding", new="")
    assert sorted(resolved.values_list("old", flat=True)) == sorted(f.category for f in findings)
    assert all(t.observed_at == later for t in resolved)


def test_a_finding_that_comes_back_opens_a_new_row(stored):
    cluster, findings, now = stored
    record_diagnosis(cluster, [], now + timedelta(minutes=5))
    counts = record_diagnosis(cluster, findings, now + timedelta(minutes=10))
    assert counts.created == len(findings)
    assert Finding.objects.filter(cluster=cluster).count() == 2 * len(findings)
    assert Finding.objects.open().filter(cluster=cluster).count() == len(findings)


def test_a_changed_finding_updates_its_row_and_last_seen(stored):
    from dataclasses import replace

    cluster, findings, now = stored
    changed = [replace(findings[0], summary=findings[0].summary + " (again)"), *findings[1:]]
    later = now + timedelta(minutes=1)
    counts = record_diagnosis(cluster, changed, later)
    assert (counts.updated, counts.created, counts.resolved) == (1, 0, 0)
    row = Finding.objects.get(cluster=cluster, summary=changed[0].summary)
    assert row.last_seen == later and row.first_seen == now
