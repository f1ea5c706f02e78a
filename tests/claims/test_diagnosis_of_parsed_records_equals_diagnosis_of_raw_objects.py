"""The diagnosis reads records: ``ClusterState.from_records`` (records parsed once, elsewhere)
gives the findings ``from_objects`` gives for the same raw objects, and keeps the very records
it was given instead of parsing again."""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import CASES

from claims.diagnosis import ClusterState, diagnose
from inventory import records
from inventory.kube import parse_time
from inventory.snapshot import load_path, newest_timestamp

CASE_DIRS = sorted(p.parent for p in CASES.glob("*/expected.yaml"))


def _both(case: Path):
    load = load_path(case / "snapshot")
    now = parse_time(newest_timestamp(load.objects))
    recs = list(records.as_records(load.objects))
    from_raw = diagnose(ClusterState.from_objects(load.objects, load.prom), now)
    from_recs = diagnose(ClusterState.from_records(recs, load.prom), now)
    return from_raw, from_recs


@pytest.mark.parametrize("case", CASE_DIRS, ids=lambda p: p.name)
def test_records_give_the_findings_raw_objects_give(case: Path):
    from_raw, from_recs = _both(case)
    assert [f.to_dict() for f in from_recs] == [f.to_dict() for f in from_raw]


def test_the_comparison_is_over_cases_with_findings():
    assert sum(1 for case in CASE_DIRS if _both(case)[0]) >= len(CASE_DIRS) - 3


@pytest.mark.parametrize("case", CASE_DIRS, ids=lambda p: p.name)
def test_the_state_keeps_the_records_it_is_given(case: Path):
    recs = list(records.as_records(load_path(case / "snapshot").objects))
    state = ClusterState.from_records(recs)
    given = {id(r) for r in recs}
    kept = [*state.nodes.values(), *state.pods.values(), *state.claims.values(), *state.slices, *state.events,
            *state.device_classes.values(), *state.templates.values(), *state.taint_rules, *state.daemonsets]
    assert kept and all(id(r) in given for r in kept)
    assert all(state.devices[d.key] is d for s in state.slices for d in s.devices)


def test_objects_the_diagnosis_cannot_read_are_named_in_its_errors():
    good = load_path(CASE_DIRS[0] / "snapshot").objects
    broken = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "no-driver"}, "spec": {}}
    state = ClusterState.from_objects([*good, broken])
    assert [e for e in state.errors if "no-driver" in e]
    assert all(s.name != "no-driver" for s in state.slices)
