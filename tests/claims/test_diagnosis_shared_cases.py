"""Every case folder under tests/fixtures/cases gets the diagnosis its expected.yaml names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from diag_helpers import CASES

from claims.diagnosis import ClusterState, diagnose
from claims.diagnosis.state import parse_time
from inventory.snapshot import load_path, newest_timestamp

CASE_DIRS = sorted(p.parent for p in CASES.glob("*/expected.yaml"))


def _diagnose(case: Path):
    load = load_path(case / "snapshot")
    state = ClusterState.from_objects(load.objects, load.prom)
    return diagnose(state, parse_time(newest_timestamp(load.objects))), state


def test_case_folders_are_discovered():
    assert len(CASE_DIRS) >= 17


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_case_gets_its_expected_diagnosis(case: Path):
    expected = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    findings, state = _diagnose(case)
    got = [f.category for f in findings]
    want = expected["expected_diagnosis"]["category"]
    forbidden = set(expected.get("must_not_diagnose") or [])
    assert not forbidden & set(got), f"forbidden categories reported: {forbidden & set(got)}"
    if want == "none":
        assert findings == [], [f.summary for f in findings]
        return
    assert want in got, f"expected {want}, got {got}"
    reported = {
        (o.kind, o.namespace, o.name) for f in findings if f.category == want for o in f.objects
    }
    present_kinds = state.kinds_seen
    for obj in expected.get("objects_involved") or []:
        if obj.get("state") == "absent" or obj["kind"] not in present_kinds:
            continue
        ref = (obj["kind"], obj.get("namespace"), obj["name"])
        assert ref in reported, f"{ref} missing from the {want} finding(s)"


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_case_findings_serialise_to_the_json_contract(case: Path):
    findings, _ = _diagnose(case)
    for f in findings:
        d = f.to_dict()
        assert {"category", "severity", "objects", "summary", "next_action", "runbook"} <= set(d)
        assert d["runbook"] == d["category"]
        assert all(set(o) == {"kind", "namespace", "name"} for o in d["objects"])
        assert d["summary"] and "\n" not in d["summary"]
