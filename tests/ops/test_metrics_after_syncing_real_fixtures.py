"""/metrics exports claims by state, devices allocated/free, sync health and readiness, computed
in the database; the values are checked against the rows counted in Python."""

from __future__ import annotations

from collections import Counter

import pytest
from django.apps import apps
from django.utils import timezone

from inventory.metrics import register_collector, registered_collectors
from inventory.models import Cluster, Device, ResourceClaim, SyncRun, SyncStatus
from tests.ops.conftest import scrape

pytestmark = pytest.mark.django_db


def _by(samples, *labels):
    return {tuple(s.labels[k] for k in labels): s.value for s in samples}


def test_claims_by_state_match_the_synced_claims(client, synced):
    m = scrape(client)
    expected = Counter((c.cluster.name, c.state) for c in ResourceClaim.objects.select_related("cluster"))
    assert expected, "the fixtures contain claims"
    assert _by(m["claimscope_claims"], "cluster", "state") == dict(expected)


def test_devices_allocated_and_free_by_product_and_profile(client, synced):
    m = scrape(client)
    expected = Counter()
    for d in Device.objects.select_related("cluster").prefetch_related("allocations"):
        status = "allocated" if d.allocations.all() else "free"
        expected[(d.cluster.name, d.product_name, d.profile, status)] += 1
    got = Counter()
    for s in m["claimscope_devices"]:
        got[(s.labels["cluster"], s.labels["product"], s.labels["profile"], s.labels["status"])] += s.value
    assert got == expected
    assert any(k[2] and k[3] == "allocated" for k in got), "MIG profiles appear with allocations"


def test_sync_age_duration_and_failures_per_cluster(client, synced):
    vks = Cluster.objects.get(name="vks")
    vks.snapshot_path = "/nonexistent/snapshot.yaml"
    vks.save()
    from inventory.tasks import sync_cluster_task

    sync_cluster_task(vks.pk)
    sync_cluster_task(vks.pk)
    m = scrape(client)
    consecutive = _by(m["claimscope_sync_consecutive_failures"], "cluster")
    failures = _by(m["claimscope_sync_failures"], "cluster")
    assert consecutive[("vks",)] == 2 and failures[("vks",)] == 2
    assert consecutive[("aicr",)] == 0
    ages = _by(m["claimscope_sync_age_seconds"], "cluster", "source")
    assert set(ages) == {("mig", "snapshot"), ("aicr", "snapshot"), ("vks", "snapshot")}
    assert all(0 <= a < 300 for a in ages.values())
    last_ok = SyncRun.objects.filter(cluster__name="aicr", status=SyncStatus.OK).latest("started")
    assert _by(m["claimscope_sync_last_duration_seconds"], "cluster")[("aicr",)] == pytest.approx(last_ok.duration_ms / 1000)
    assert _by(m["claimscope_sync_last_status"], "cluster", "status")[("vks", "failed")] == 1


def test_readiness_score_is_the_latest_evaluation_per_cluster(client, synced):
    model = apps.get_model("migration", "ReadinessEvaluation")
    latest = {}
    for e in model.objects.select_related("cluster").order_by("evaluated_at"):
        latest[e.cluster.name] = e.score
    if not latest:
        pytest.skip("no readiness evaluation stored by the sync hooks")
    m = scrape(client)
    assert {k[0]: v for k, v in _by(m["claimscope_readiness_score"], "cluster").items()} == latest


def test_open_stuck_findings_are_counted_by_category_and_severity(client, synced):
    try:
        model = apps.get_model("claims", "Finding")
    except LookupError:
        pytest.skip("claims.Finding does not exist yet")
    expected = Counter(
        (f.cluster.name, str(f.category), str(f.severity))
        for f in model.objects.select_related("cluster").filter(resolved_at__isnull=True)
    )
    assert expected, "the MIG constraint case yields an open finding"
    m = scrape(client)
    assert _by(m["claimscope_stuck_findings"], "cluster", "category", "severity") == dict(expected)
    oldest = _by(m["claimscope_stuck_findings_oldest_seconds"], "cluster", "category", "severity")
    assert set(oldest) == set(expected) and all(v >= 0 for v in oldest.values())


def test_the_scrape_runs_a_bounded_number_of_queries(client, synced, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        scrape(client)
    for i in range(5):
        Cluster.objects.create(name=f"extra-{i}", last_sync_at=timezone.now())
    with django_assert_max_num_queries(8):
        scrape(client)


def test_a_failing_collector_is_reported_and_does_not_hide_the_others(client, synced):
    def broken():
        raise RuntimeError("table missing")
        yield  # pragma: no cover

    register_collector(broken)
    try:
        m = scrape(client)
    finally:
        from inventory import metrics

        metrics._collectors.remove(broken)
    errors = {s.labels["collector"]: s.value for s in m["claimscope_collector_errors"]}
    assert any(k.endswith("broken") and v == 1 for k, v in errors.items())
    assert all(v == 0 for k, v in errors.items() if not k.endswith("broken"))
    assert m["claimscope_claims"]


def test_claims_and_migration_register_their_collectors():
    modules = {fn.__module__ for fn in registered_collectors()}
    assert {"inventory.metrics", "claims.metrics", "migration.metrics"} <= modules
