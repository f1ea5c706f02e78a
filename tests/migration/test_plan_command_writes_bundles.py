from __future__ import annotations

import json

import pytest
import yaml
from migration_fixtures import FIXTURES, WORKLOADS

from migration.plan_command import PlanInputError, run_plan_migration


def test_snapshot_folder_gives_one_bundle_per_namespace_and_summaries(tmp_path):
    plan, text = run_plan_migration(out=tmp_path / "out", snapshot=WORKLOADS, server_version="1.33.5")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(f"{ns}.yaml" for ns in plan.bundles)
    assert {"team-a.yaml", "team-b.yaml"} <= {p.name for p in out.glob("*.yaml")}
    docs = [d for d in yaml.safe_load_all((out / "team-a.yaml").read_text()) if d]
    assert {d["kind"] for d in docs} >= {"ResourceClaimTemplate", "Deployment", "Job", "CronJob"}
    assert (out / "stopgap" / "_cluster.yaml").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["workloads_found"] == len(plan.workloads)
    assert summary["templates_generated"] == len(plan.templates())
    assert summary["blockers"] == len(plan.blockers) > 0
    assert (out / "summary.txt").read_text() == text
    assert f"Workloads found: {len(plan.workloads)}" in text


def test_cluster_source_goes_through_the_loader(tmp_path):
    from inventory.snapshot import load_path

    objects = load_path(WORKLOADS / "workloads.yaml").objects
    plan, _ = run_plan_migration(out=tmp_path, cluster="prod", cluster_loader=lambda name: (objects, {}))
    assert len(plan.workloads) == 5


def test_unknown_cluster_is_one_clear_error(tmp_path):
    def loader(name):
        raise LookupError(f"no cluster named {name}")

    with pytest.raises(PlanInputError, match="unknown cluster 'nope'"):
        run_plan_migration(out=tmp_path, cluster="nope", cluster_loader=loader)


def test_missing_snapshot_is_an_error(tmp_path):
    with pytest.raises(PlanInputError, match="does not exist"):
        run_plan_migration(out=tmp_path / "o", snapshot=tmp_path / "missing")


def test_snapshot_without_objects_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.yaml").write_text("just: text\n")
    with pytest.raises(PlanInputError, match="no Kubernetes objects"):
        run_plan_migration(out=tmp_path / "o", snapshot=tmp_path / "empty")


def test_both_or_neither_source_is_an_error(tmp_path):
    with pytest.raises(PlanInputError):
        run_plan_migration(out=tmp_path)
    with pytest.raises(PlanInputError):
        run_plan_migration(out=tmp_path, snapshot=FIXTURES, cluster="x", cluster_loader=lambda n: ([], {}))


def test_bad_target_version_is_an_error(tmp_path):
    with pytest.raises(PlanInputError, match="not a Kubernetes version"):
        run_plan_migration(out=tmp_path, snapshot=WORKLOADS, target_version="newest")


def test_management_command_prints_the_summary_and_fails_cleanly(tmp_path, capsys):
    from django.core.management import CommandError, call_command

    call_command("plan_migration", "--snapshot", str(WORKLOADS), "--out", str(tmp_path / "o"), "--server-version", "1.35.2")
    assert "Workloads found:" in capsys.readouterr().out
    assert (tmp_path / "o" / "summary.json").exists()
    with pytest.raises(CommandError, match="does not exist"):
        call_command("plan_migration", "--snapshot", str(tmp_path / "missing"), "--out", str(tmp_path / "o2"))
