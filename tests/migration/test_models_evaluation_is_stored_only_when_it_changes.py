"""Checklist evaluations are transitions: a sync stores a row only when the result changed."""

from __future__ import annotations

from datetime import timedelta

import pytest
import yaml
from django.utils import timezone
from migration_fixtures import WORKLOADS

from migration.evaluation import evaluate_cluster
from migration.models import Attestation, ReadinessEvaluation, Trigger

pytestmark = pytest.mark.django_db


def test_first_sync_stores_one_evaluation_of_eight_items(legacy):
    rows = list(ReadinessEvaluation.objects.filter(cluster=legacy))
    assert len(rows) == 1
    ev = rows[0]
    assert ev.trigger == Trigger.SYNC and ev.total == 8 and len(ev.items) == 8
    assert {i["id"] for i in ev.items} >= {"allocation_path", "dcgm_alerts", "evidence"}
    assert all({"id", "status", "evidence"} <= set(i) for i in ev.items)
    assert ev.score == round(100 * ev.passed / ev.total)


def test_resync_without_change_writes_no_evaluation_row(legacy, sync_snapshot):
    before = ReadinessEvaluation.objects.count()
    run = sync_snapshot(WORKLOADS, name="legacy")
    assert run.status == "ok"
    assert ReadinessEvaluation.objects.count() == before


def test_resync_with_a_changed_cluster_writes_one_row(legacy, sync_snapshot, tmp_path):
    # The operator's gpu-operator Deployment switches to an unpinned image: item 2 fails.
    folder = tmp_path / "snap"
    folder.mkdir()
    for f in WORKLOADS.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    docs = list(yaml.safe_load_all((folder / "operator.yaml").read_text()))
    for d in docs:
        if d and d.get("kind") == "Deployment" and d["metadata"]["name"] == "gpu-operator":
            d["spec"]["template"]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/gpu-operator:latest"
            d["metadata"]["resourceVersion"] = "999999"
    (folder / "operator.yaml").write_text(yaml.safe_dump_all(docs))
    old = ReadinessEvaluation.objects.get(cluster=legacy)
    assert old.statuses()["operator_pinned"] == "pass"
    sync_snapshot(folder, name="legacy")
    rows = list(ReadinessEvaluation.objects.filter(cluster=legacy))
    assert len(rows) == 2
    assert rows[0].statuses()["operator_pinned"] == "fail"
    sync_snapshot(folder, name="legacy")
    assert ReadinessEvaluation.objects.filter(cluster=legacy).count() == 2


def test_an_attestation_changes_the_result_and_its_expiry_does_again(legacy, operator, settings):
    settings.READINESS_ATTESTATION_DAYS = 30
    now = timezone.now()
    att = Attestation.objects.create(cluster=legacy, item_id="evidence", attested_by=operator, attested_at=now,
                                     evidence_url="https://git.example.com/infra/-/commit/abc123")
    assert att.attested_by_name == operator.username
    assert att.expires_at == now + timedelta(days=30)
    row, created = evaluate_cluster(legacy, now + timedelta(seconds=1), Trigger.ATTESTATION)
    assert created and row.statuses()["evidence"] == "attested"
    item = next(i for i in row.items if i["id"] == "evidence")
    assert item["attestation_id"] == att.pk
    _same, created = evaluate_cluster(legacy, now + timedelta(days=1))
    assert not created
    lapsed, created = evaluate_cluster(legacy, now + timedelta(days=31))
    assert created and lapsed.statuses()["evidence"] == "unknown"
    assert any("expired" in line for line in next(i for i in lapsed.items if i["id"] == "evidence")["evidence"])


def test_expiry_comes_from_the_setting_default_ninety_days(legacy):
    now = timezone.now()
    att = Attestation.objects.create(cluster=legacy, item_id="operator_pinned", attested_by_name="sre",
                                     attested_at=now, evidence_url="https://git.example.com/x")
    assert att.expires_at - att.attested_at == timedelta(days=90)
    assert att.is_valid(now) and not att.is_valid(now + timedelta(days=90))
