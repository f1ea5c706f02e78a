"""A slice whose ``spec.devices`` or a claim whose allocation results are of a JSON type no
API server serves there (``"oops"``, a number, a list of strings) is a problem of the read,
named with the object and the field: the run is partial and keeps the devices and allocation
the last good sync stored, instead of reading the field as empty and deleting them."""

from __future__ import annotations

import copy

import pytest

from inventory.records.base import shape_paths, shape_problem
from inventory.snapshot import load_path
from tests.conftest import H100_SLICES, VKS_CLAIM, write_list

SHAPES = shape_paths("spec{}", "spec.devices[]")


@pytest.mark.parametrize(("obj", "problem"), [
    ({}, None),
    ({"spec": None}, None),
    ({"spec": {"devices": None}}, None),
    ({"spec": {"devices": []}}, None),
    ({"spec": {"devices": [{"name": "gpu-0"}]}}, None),
    ({"spec": "x"}, "spec is a string, not a map"),
    ({"spec": {"devices": "oops"}}, "spec.devices is a string, not a list"),
    ({"spec": {"devices": {"name": "gpu-0"}}}, "spec.devices is a map, not a list"),
    ({"spec": {"devices": 3}}, "spec.devices is a number, not a list"),
    ({"spec": {"devices": [{"name": "gpu-0"}, "gpu-1"]}}, "spec.devices holds an item that is not a map"),
])  # fmt: skip
def test_shape_problem_names_the_field_and_its_type(obj, problem):
    assert shape_problem(obj, SHAPES) == problem


def _slices_of(cluster):
    from inventory.models import Device

    return sorted(Device.objects.filter(cluster=cluster).values_list("slice__uid", "name"))


@pytest.mark.parametrize("bad", ["oops", 7, {"name": "gpu-0"}, ["gpu-0"]])
@pytest.mark.parametrize("version", ["resource.k8s.io/v1", "resource.k8s.io/v1beta1"])
def test_a_slice_with_devices_of_the_wrong_type_keeps_its_stored_devices(tmp_path, sync_snapshot, bad, version):
    from inventory.models import Cluster, SyncStatus

    objs = load_path(H100_SLICES).objects
    assert sync_snapshot(write_list(tmp_path / "good.json", objs), "shapes").status == SyncStatus.OK
    cluster = Cluster.objects.get(name="shapes")
    before = _slices_of(cluster)
    broken = copy.deepcopy(objs)
    victim = next(o for o in broken if o["kind"] == "ResourceSlice" and o["spec"].get("devices"))
    victim["apiVersion"] = version
    victim["spec"]["devices"] = bad
    victim["metadata"]["resourceVersion"] = "changed"
    run = sync_snapshot(write_list(tmp_path / "bad.json", broken), "shapes")
    assert run.status == SyncStatus.PARTIAL
    assert any(victim["metadata"]["name"] in e and "spec.devices" in e for e in run.errors), run.errors
    assert _slices_of(cluster) == before


@pytest.mark.parametrize(("field", "bad"), [("results", "x"), ("results", [1, 2]), ("devices", "x")])
def test_a_claim_with_an_allocation_of_the_wrong_type_keeps_its_stored_allocation(tmp_path, sync_snapshot, field, bad):
    from inventory.models import AllocationResult, Cluster, SyncStatus

    objs = load_path(VKS_CLAIM).objects
    assert sync_snapshot(write_list(tmp_path / "good.json", objs), "claim-shapes").status == SyncStatus.OK
    cluster = Cluster.objects.get(name="claim-shapes")
    before = sorted(AllocationResult.objects.filter(cluster=cluster).values_list("claim__uid", "device_name"))
    assert before
    broken = copy.deepcopy(objs)
    claim = next(o for o in broken if o["kind"] == "ResourceClaim")
    alloc = claim["status"]["allocation"]
    if field == "results":
        alloc["devices"]["results"] = bad
    else:
        alloc["devices"] = bad
    claim["metadata"]["resourceVersion"] = "changed"
    run = sync_snapshot(write_list(tmp_path / "bad.json", broken), "claim-shapes")
    assert run.status == SyncStatus.PARTIAL
    assert any(claim["metadata"]["name"] in e and "status.allocation.devices" in e for e in run.errors), run.errors
    assert sorted(AllocationResult.objects.filter(cluster=cluster).values_list("claim__uid", "device_name")) == before
