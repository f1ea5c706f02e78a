"""A sync commits its objects, its findings and its run's outcome together; an analysis that
fails is rolled back alone, said on the run, and runs again next time; a run whose process
died is closed by the next sync, which analyses the cluster again."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import CASES

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


@pytest.fixture
def case_cluster(sync_snapshot):
    from inventory.models import Cluster, SyncStatus

    run = sync_snapshot(CASE, "case")
    assert run.status == SyncStatus.OK
    return Cluster.objects.get(name="case")


def _open_categories(cluster):
    from claims.models import Finding

    return sorted(Finding.objects.filter(cluster=cluster, resolved_at__isnull=True).values_list("category", flat=True))


def test_a_failing_diagnosis_is_reported_on_the_run_and_runs_again_next_sync(db, monkeypatch, sync_snapshot):
    from django.utils import timezone

    from claims import store
    from inventory.models import Cluster, ResourceClaim, SyncStatus
    from migration.models import ReadinessEvaluation

    def broken(cluster, prom=None, model=None, change=None):
        now = timezone.now()
        store.Finding.objects.create(cluster=cluster, category="capacity_exhausted", fingerprint="half-written",
                                     severity="warning", severity_rank=1, first_seen=now, last_seen=now)
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(store, "sync_diagnosis", broken)
    run = sync_snapshot(CASE, "case")
    cluster = Cluster.objects.get(name="case")
    assert run.status == SyncStatus.PARTIAL
    assert any(e.startswith("analysis failed: claims: RecursionError") for e in run.errors)
    assert "analysis" in run.error
    # The inventory and the other analyses are stored; the failed one left no half-written row.
    assert ResourceClaim.objects.filter(cluster=cluster).count() > 0
    assert ReadinessEvaluation.objects.filter(cluster=cluster).exists()
    assert _open_categories(cluster) == []
    assert cluster.analyzed_at is None

    monkeypatch.undo()
    again = sync_snapshot(CASE, "case")  # nothing changed in the snapshot, yet analysed again
    assert again.status == SyncStatus.OK, again.errors
    assert "capacity_exhausted" in _open_categories(cluster)


def test_a_run_whose_process_died_is_closed_and_the_cluster_analysed_again(case_cluster, sync_snapshot):
    from django.utils import timezone

    from claims.models import Finding
    from inventory.models import SyncRun, SyncStatus

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = SyncRun.objects.create(cluster=case_cluster, source="killed", started=timezone.now(),
                                  worker=f"{socket.gethostname()}:{gone.pid}")
    Finding.objects.filter(cluster=case_cluster).delete()  # what a killed analysis could leave

    run = sync_snapshot(CASE, "case")
    dead.refresh_from_db()
    assert dead.status == SyncStatus.FAILED
    assert dead.finished is not None and "ended before it finished" in dead.error
    assert run.status == SyncStatus.OK
    assert "capacity_exhausted" in _open_categories(case_cluster)


def test_a_run_of_a_live_process_is_left_running(case_cluster, sync_snapshot):
    from django.utils import timezone

    from inventory.models import SyncRun, SyncStatus

    alive = SyncRun.objects.create(cluster=case_cluster, source="elsewhere", started=timezone.now(),
                                   worker=f"{socket.gethostname()}:{os.getppid()}")
    sync_snapshot(CASE, "case")
    alive.refresh_from_db()
    assert alive.status == SyncStatus.RUNNING


def test_a_failing_rule_is_said_on_the_run_and_keeps_its_open_findings(case_cluster, monkeypatch, sync_snapshot):
    from claims.diagnosis.context import Context
    from claims.models import Finding
    from inventory.models import SyncStatus

    before = set(Finding.objects.filter(cluster=case_cluster, resolved_at__isnull=True).values_list("pk", "category"))
    assert "capacity_exhausted" in {c for _, c in before}

    def broken(self, claim):
        raise RecursionError("maximum recursion depth exceeded in comparison")

    monkeypatch.setattr(Context, "feasibility", broken)
    case_cluster.analyzed_at = None  # analyse again although nothing changed
    case_cluster.save(update_fields=["analyzed_at"])
    run = sync_snapshot(CASE, "case")
    assert run.status == SyncStatus.PARTIAL
    assert any(e.startswith("analysis failed: claims: ") and "rule_allocation" in e for e in run.errors), run.errors
    after = set(Finding.objects.filter(cluster=case_cluster, resolved_at__isnull=True).values_list("pk", "category"))
    assert after == before  # the failed rule could not say its finding went away: kept open
