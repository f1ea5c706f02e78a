"""Every case folder (tests/fixtures/cases, copied from the shared cases) gets its expected
category and none of its ``must_not_diagnose`` through ``diagnose --snapshot``: without
``--now`` (the snapshot's newest timestamp, or the current time for the cases that have no
timestamp at all), and with ``--now`` given as that moment and as ten minutes later."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from claims.management.commands.diagnose import run_diagnose
from inventory.kube import parse_time
from inventory.snapshot import load_path, newest_timestamp

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"
CASE_DIRS = sorted(p.parent for p in CASES.glob("*/expected.yaml"))


def _now_variants(case: Path) -> list[str | None]:
    newest = parse_time(newest_timestamp(load_path(case / "snapshot").objects))
    if newest is None:  # a snapshot without any timestamp: without --now it is the current time
        return [None, "2026-12-01T00:00:00Z"]
    later = newest + timedelta(minutes=10)
    return [None, newest.strftime("%Y-%m-%dT%H:%M:%SZ"), later.strftime("%Y-%m-%dT%H:%M:%SZ")]


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_case_passes_with_and_without_now(case: Path):
    expected = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    want = expected["expected_diagnosis"]["category"]
    forbidden = set(expected.get("must_not_diagnose") or [])
    for now in _now_variants(case):
        got = [f["category"] for f in json.loads(run_diagnose(case / "snapshot", now, "json"))["findings"]]
        assert not forbidden & set(got), (now, got)
        if want == "none":
            assert got == [], (now, got)
        else:
            assert want in got, (now, got)
