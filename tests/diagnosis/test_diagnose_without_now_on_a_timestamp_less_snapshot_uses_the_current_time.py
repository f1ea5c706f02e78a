"""``diagnose --snapshot`` without ``--now`` on a snapshot with no timestamp at all (a real
quickstart manifest) diagnoses at the current time and says so: first line of the text, a
note on stderr for JSON (whose document stays exactly the findings)."""

from __future__ import annotations

import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from django.core.management import call_command

from claims.management.commands.diagnose import run_diagnose

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/k8s/claims-and-templates/quickstart-v1/gpu-test1.yaml"
CLOCK = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def _snapshot(tmp_path):
    assert "Timestamp" not in FIXTURE.read_text(encoding="utf-8")  # the point of the fixture
    shutil.copy(FIXTURE, tmp_path / "gpu-test1.yaml")
    return tmp_path


def test_text_output_starts_by_naming_the_current_time(tmp_path):
    out = run_diagnose(_snapshot(tmp_path), None, "text", clock=lambda: CLOCK)
    first = out.splitlines()[0]
    assert "current time" in first and "2026-12-01T09:30:00Z" in first and "no timestamp" in first


def test_json_stays_the_findings_contract_and_the_note_is_returned(tmp_path):
    notes: list[str] = []
    doc = json.loads(run_diagnose(_snapshot(tmp_path), None, "json", notes=notes, clock=lambda: CLOCK))
    assert set(doc) == {"findings"}
    assert len(notes) == 1 and "2026-12-01T09:30:00Z" in notes[0]


def test_the_command_accepts_it_and_prints_the_note_on_stderr(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    call_command("diagnose", "--snapshot", str(_snapshot(tmp_path)), "--format", "json", stdout=out, stderr=err)
    assert set(json.loads(out.getvalue())) == {"findings"}
    assert "current time" in err.getvalue()


def test_a_given_now_needs_no_note(tmp_path):
    notes: list[str] = []
    out = run_diagnose(_snapshot(tmp_path), "2026-11-20T11:00:00Z", "text", notes=notes)
    assert notes == [] and "current time" not in out
