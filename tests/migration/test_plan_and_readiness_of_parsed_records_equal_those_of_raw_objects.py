"""The planner and the checklist read records: given the records of a cluster (parsed once,
elsewhere), ``plan_records`` and ``evaluate_readiness`` give what the raw objects give; without
the raw workloads the plan still finds them but says it cannot patch them."""

from __future__ import annotations

import datetime as dt

from migration_fixtures import CASES, device_plugin_cluster, load

from inventory import records
from inventory.snapshot import load_path
from migration.plan_command import summarize
from migration.planner import plan_migration, plan_records
from migration.readiness import evaluate_readiness

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _cluster():
    return device_plugin_cluster() + load("workloads/priority.yaml", "workloads/kserve.yaml", "workloads/control-plane.yaml",
                                          "workloads/sharing-timeslicing.configmap.yaml", "default-mig-parted-config.configmap.yaml")


def test_a_plan_of_records_and_their_raw_workloads_is_the_plan_of_the_raw_objects():
    objects = _cluster()
    recs = list(records.as_records(objects, keep_unknown=True))
    raw_of = {r.ref: o for r, o in zip(recs, objects, strict=True)}
    from_raw = plan_migration(objects, "v1.33.5", "1.36")
    from_recs = plan_records(recs, "v1.33.5", "1.36", raw_of.get)
    assert from_raw.workload_plans and from_raw.findings
    assert summarize(from_recs) == summarize(from_raw)
    assert from_recs.bundles == from_raw.bundles and from_recs.stopgap_bundles == from_raw.stopgap_bundles


def test_a_plan_of_records_alone_finds_the_workloads_but_generates_nothing_for_them():
    objects = _cluster()
    plan = plan_records(list(records.as_records(objects, keep_unknown=True)), "v1.33.5", "1.36")
    full = plan_migration(objects, "v1.33.5", "1.36")
    assert [w.ref for w in plan.workloads] == [w.ref for w in full.workloads]
    assert not plan.templates() and not plan.bundles
    patchable = [p.workload.ref for p in full.workload_plans if p.patched is not None]
    assert patchable and all(any(str(ref) in e and "cannot be patched" in e for e in plan.errors) for ref in patchable)


def test_the_checklist_of_records_is_the_checklist_of_the_raw_objects():
    clusters = [_cluster()] + [load_path(p).objects for p in sorted(CASES.glob("*/snapshot"))]
    for objects in clusters:
        recs = list(records.as_records(objects, []))
        assert evaluate_readiness(recs, NOW) == evaluate_readiness(objects, NOW)
    assert len({evaluate_readiness(objs, NOW).score for objs in clusters}) > 1  # the clusters differ
