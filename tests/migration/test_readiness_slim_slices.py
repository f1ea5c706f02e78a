"""The readiness checklist gives the same items whether ResourceSlices and Pods are whole or
slimmed (``slim_object``) and whether it sees every object or only ``READINESS_KINDS``."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
from migration_fixtures import FIXTURES, WORKLOADS, load

from inventory.normalize import normalize
from inventory.snapshot import load_path
from migration.readiness import READINESS_KINDS, evaluate_readiness, slim_object, slim_slice
from tests.conftest import CASES, H100_SLICES, VKS_SLICES

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _case_snapshots():
    """Every case snapshot that holds both ResourceSlices and Nodes."""
    out = []
    for path in sorted(CASES.glob("*/snapshot")):
        kinds = {o["kind"] for o in load_path(path).objects}
        if {"ResourceSlice", "Node"} <= kinds:
            out.append(path)
    return out


CASE_SNAPSHOTS = _case_snapshots()


def _migration_cluster():
    """Mixed GPU nodes, workloads, operator, a ClusterPolicy and mig-parted config, plus real
    H100 and vGPU slices."""
    objs = load("workloads", "v1_clusterpolicy.yaml", "default-mig-parted-config.configmap.yaml")
    return objs + load_path(H100_SLICES).objects + load_path(VKS_SLICES).objects


def _slimmed(objects):
    return [slim_object(o) for o in objects]


def _as_the_evaluation_reads_them(objects):
    """What ``evaluate_cluster`` hands over: only READINESS_KINDS, slices slimmed."""
    return _slimmed([o for o in objects if o.get("kind") in READINESS_KINDS])


def test_there_are_cases_whose_slices_change_the_checklist():
    # Guards the tests below against comparing results the slices never influence.
    changed = [
        p for p in CASE_SNAPSHOTS
        if evaluate_readiness(load_path(p).objects, NOW)
        != evaluate_readiness([o for o in load_path(p).objects if o["kind"] != "ResourceSlice"], NOW)
    ]  # fmt: skip
    assert len(CASE_SNAPSHOTS) >= 5
    assert len(changed) >= 3


@pytest.mark.parametrize("path", CASE_SNAPSHOTS, ids=lambda p: p.parent.name)
def test_slim_slices_give_the_same_checklist_on_each_case(path):
    objects = load_path(path).objects
    full = evaluate_readiness(copy.deepcopy(objects), NOW)
    assert evaluate_readiness(_slimmed(copy.deepcopy(objects)), NOW) == full
    assert evaluate_readiness(_as_the_evaluation_reads_them(copy.deepcopy(objects)), NOW) == full


@pytest.mark.parametrize("path", CASE_SNAPSHOTS, ids=lambda p: p.parent.name)
def test_slim_slices_of_stored_v1_objects_give_the_same_checklist(path):
    # The sync stores objects normalized to v1: this is what the evaluation slims.
    objects = [normalize(o) for o in load_path(path).objects]
    assert evaluate_readiness(_as_the_evaluation_reads_them(objects), NOW) == evaluate_readiness(objects, NOW)


def test_slim_slices_give_the_same_checklist_on_a_mixed_device_plugin_and_dra_cluster():
    objects = _migration_cluster()
    full = evaluate_readiness(copy.deepcopy(objects), NOW)
    without_slices = evaluate_readiness([o for o in objects if o["kind"] != "ResourceSlice"], NOW)
    assert full != without_slices  # the slices' driver versions and nodes count here
    assert evaluate_readiness(_as_the_evaluation_reads_them(copy.deepcopy(objects)), NOW) == full


def test_a_driver_version_only_slices_show_is_kept_by_slim_slice():
    # Two slices of one node pool disagree on the driver: the evidence item must fail either way.
    objects = _migration_cluster()
    slices = [o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com"]
    other = copy.deepcopy(slices[0])
    other["metadata"].update(name=other["metadata"]["name"] + "-b", uid="9d9d9d9d-0000-4000-8000-000000000001")
    other["spec"]["pool"]["name"] += "-b"
    for d in other["spec"]["devices"]:
        d["attributes"]["driverVersion"] = {"version": "570.86.15"}
    objects.append(other)
    full = evaluate_readiness(copy.deepcopy(objects), NOW)
    assert full.item("evidence").status == "fail"
    assert any("570.86.15" in line for line in full.item("evidence").evidence)
    assert evaluate_readiness(_as_the_evaluation_reads_them(objects), NOW) == full


def test_slim_slice_keeps_only_what_the_checklist_reads():
    s = load_path(H100_SLICES).objects[1]
    slim = slim_slice(s)
    assert slim["kind"] == "ResourceSlice" and slim["apiVersion"] == s["apiVersion"]
    assert slim["metadata"] == {"name": s["metadata"]["name"], "uid": s["metadata"]["uid"]}
    assert slim["spec"]["driver"] == s["spec"]["driver"] and slim["spec"]["pool"] == s["spec"]["pool"]
    assert [d["name"] for d in slim["spec"]["devices"]] == [d["name"] for d in s["spec"]["devices"]]
    for d in slim["spec"]["devices"]:
        assert set(d) == {"name", "attributes"}
        assert set(d["attributes"]) <= {"driverVersion", "gpu.nvidia.com/driverVersion"}
    assert len(repr(slim)) < len(repr(s)) / 3


def _as_v1beta1(slice_v1):
    """The same slice as a v1beta1 server serves it: device fields under ``basic``."""
    s = copy.deepcopy(slice_v1)
    s["apiVersion"] = "resource.k8s.io/v1beta1"
    s["spec"]["devices"] = [
        {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in s["spec"]["devices"]
    ]
    return s


# Regression: at 3cb38b4 slim_slice dropped a raw v1beta1 slice's driverVersion (devices[].basic).
def test_slim_slice_of_a_raw_v1beta1_slice_keeps_the_driver_version():
    nodes = [o for o in load(*[str(WORKLOADS.relative_to(FIXTURES) / "nodes-mixed.yaml")]) if o["kind"] == "Node"]
    slices = [_as_v1beta1(o) for o in load_path(H100_SLICES).objects]
    back = {k: v for k, v in normalize(slices[1]).items() if not k.startswith("x-claimscope")}
    assert back == load_path(H100_SLICES).objects[1]  # the conversion is faithful
    objects = nodes + slices
    full = evaluate_readiness(copy.deepcopy(objects), NOW)
    assert any("580" in line for line in full.item("evidence").evidence)
    assert evaluate_readiness(_slimmed(objects), NOW) == full


def test_there_are_clusters_whose_pods_change_the_checklist():
    # Guards the slim-pod comparisons above against pods the checklist never reads.
    clusters = [load_path(p).objects for p in CASE_SNAPSHOTS] + [_migration_cluster()]
    changed = [
        objs for objs in clusters
        if evaluate_readiness(copy.deepcopy(objs), NOW) != evaluate_readiness([o for o in objs if o["kind"] != "Pod"], NOW)
    ]  # fmt: skip
    assert changed
    for objs in changed:
        assert evaluate_readiness(_slimmed(copy.deepcopy(objs)), NOW) == evaluate_readiness(copy.deepcopy(objs), NOW)
