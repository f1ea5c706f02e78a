"""``manage.py diagnose`` and its Django-free core ``run_diagnose``."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from diag_helpers import CASES
from django.core.management import CommandError, call_command

from claims.management.commands.diagnose import DiagnoseInputError, run_diagnose

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


def test_json_output_is_exactly_the_findings_contract():
    doc = json.loads(run_diagnose(CASE, None, "json"))
    assert set(doc) == {"findings"}
    f = doc["findings"][0]
    assert set(f) == {"category", "severity", "objects", "summary", "next_action", "runbook"}
    assert f["category"] == "capacity_exhausted"


def test_now_before_the_pending_threshold_reports_nothing():
    doc = json.loads(run_diagnose(CASE, "2026-11-09T10:00:00Z", "json"))
    assert doc == {"findings": []}


def test_missing_path_is_a_clear_input_error():
    with pytest.raises(DiagnoseInputError, match="does not exist"):
        run_diagnose("/nonexistent/snapshot", None, "text")


def test_malformed_yaml_is_an_input_error(tmp_path):
    (tmp_path / "bad.yaml").write_text("kind: Pod\nmetadata: {name: [\n")
    with pytest.raises(DiagnoseInputError, match="YAML"):
        run_diagnose(tmp_path, None, "text")


def test_unknown_dra_api_version_is_an_input_error(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "apiVersion: resource.k8s.io/v9\nkind: ResourceClaim\nmetadata: {name: a, namespace: b}\n"
    )
    with pytest.raises(DiagnoseInputError, match="unsupported API version"):
        run_diagnose(tmp_path, "2026-01-01T00:00:00Z", "text")


def test_command_prints_text_and_fails_with_command_error():
    out = StringIO()
    call_command("diagnose", "--snapshot", str(CASE), stdout=out)
    assert "capacity_exhausted" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("diagnose", "--snapshot", "/nonexistent")


def test_snapshot_diagnosis_uses_the_threshold_settings(settings, capsys, db):
    """A pending threshold longer than the case's wait hides the pending finding."""
    case = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"
    call_command("diagnose", "--snapshot", str(case), "--format", "json")
    before = {f["category"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert "capacity_exhausted" in before
    settings.DIAGNOSIS_PENDING_SECONDS = 10 * 24 * 3600
    call_command("diagnose", "--snapshot", str(case), "--format", "json")
    after = {f["category"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert "capacity_exhausted" not in after
