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


def _with_count(objs, n):
    out = copy.deepcopy(objs)
    pending = next(o for o in out if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation"))
    for r in pending["spec"]["devices"]["requests"]:
        body = r.get("exactly", r)
        body["allocationMode"] = "ExactCount"
        body["count"] = n
    return out, pending


MIG_CASE = "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


def test_a_request_count_wider_than_int64_is_a_problem_of_that_claim_alone(tmp_path, sync_snapshot):
    """10^30 devices: no API server serves it. The claim is named, the others are stored."""
    from inventory.models import Cluster, ResourceClaim, SyncStatus
    from tests.conftest import CASES

    objs, claim = _with_count(load_path(CASES / MIG_CASE).objects, 10**30)
    run = sync_snapshot(write_list(tmp_path / "huge.json", objs), "huge")
    assert run.status == SyncStatus.PARTIAL
    name = f"{claim['metadata']['namespace']}/{claim['metadata']['name']}"
    assert [e for e in run.errors if "count" in e] == [
        f"ResourceClaim {name}: spec.devices.requests[0] count 100000000000... (31 characters) is not a device count an API server accepts (a whole number, 1 to 2^63-1)"]
    assert not [e for e in run.errors if "analysis failed" in e or "storing" in e], run.errors
    stored = set(ResourceClaim.objects.filter(cluster=Cluster.objects.get(name="huge")).values_list("uid", flat=True))
    assert stored == {o["metadata"]["uid"] for o in objs if o["kind"] == "ResourceClaim"} - {claim["metadata"]["uid"]}


@pytest.mark.parametrize("count", [0, -1, -1.0, "3", "0", 0.5, 2.5, 1e30, 1.0e19, True, [], {}, "99999999999999999999999", 2**63])
def test_a_count_that_is_not_a_whole_number_of_devices_is_a_problem(tmp_path, sync_snapshot, count):
    """Read as the default (1) or truncated (2.5 -> 2), it would change what the claim asks for."""
    from inventory.models import SyncStatus
    from tests.conftest import CASES

    objs, claim = _with_count(load_path(CASES / MIG_CASE).objects, count)
    run = sync_snapshot(write_list(tmp_path / "odd.json", objs), "odd-count")
    assert run.status == SyncStatus.PARTIAL
    assert [e for e in run.errors if "count" in e and claim["metadata"]["name"] in e], run.errors


def test_a_count_larger_than_the_cluster_is_diagnosed_without_building_that_many_slots(tmp_path, sync_snapshot):
    """2^62 devices fits int64: a real (if absurd) claim, found unsatisfiable at once."""
    from claims.models import Finding
    from inventory.models import Cluster, SyncStatus
    from tests.conftest import CASES

    objs, claim = _with_count(load_path(CASES / MIG_CASE).objects, 2**62)
    run = sync_snapshot(write_list(tmp_path / "big.json", objs), "big")
    assert run.status == SyncStatus.OK, run.errors
    findings = Finding.objects.filter(cluster=Cluster.objects.get(name="big"), uid=claim["metadata"]["uid"])
    assert findings.exists()
