"""``manage.py plan_migration --cluster NAME`` plans from the database, as the page does."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest
import yaml
from django.core.management import CommandError, call_command

from migration.generate import schema_version_for

pytestmark = pytest.mark.django_db


def test_plan_command_reads_the_synced_cluster(legacy, tmp_path, capsys):
    call_command("plan_migration", "--cluster", "legacy", "--out", str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["server_version"] == "v1.33.5"  # from the kubelets: snapshots carry no server version
    assert summary["workloads_found"] > 0 and summary["templates_generated"] > 0
    schema = schema_version_for("1.36")[0]
    bundles = sorted(tmp_path.glob("*.yaml"))
    assert {p.stem for p in bundles} >= {"team-a", "team-b"}
    for path in bundles:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                kubernetes_validate.validate(doc, schema, strict=True)
    assert "Workloads found" in capsys.readouterr().out


def test_stored_server_version_wins_over_kubelets(legacy, tmp_path):
    legacy.server_version = "v1.35.2"
    legacy.save(update_fields=["server_version"])
    call_command("plan_migration", "--cluster", "legacy", "--out", str(tmp_path))
    assert json.loads((tmp_path / "summary.json").read_text())["server_version"] == "v1.35.2"


def test_unknown_cluster_is_a_command_error(db, tmp_path):
    with pytest.raises(CommandError, match="unknown cluster 'nope'"):
        call_command("plan_migration", "--cluster", "nope", "--out", str(tmp_path))
