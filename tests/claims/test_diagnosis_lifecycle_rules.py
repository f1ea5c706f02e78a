"""Claim lifecycle categories, starting from the real VKS claim (allocated and reserved)."""

from __future__ import annotations

import copy

from diag_helpers import base_cluster, categories, claim, load_yaml, names, of_kind, pod, request, run

from claims.diagnosis import Thresholds


def _vks():
    objs = load_yaml("k8s/resourceslices/vks-2x-grid-a100-10c-vgpu-gpu-slices.v1.yaml")
    objs = of_kind(objs, "ResourceSlice")
    c = of_kind(load_yaml("k8s/claims-with-status/vks-resourceclaim-allocated-reserved.v1.yaml"), "ResourceClaim")[0]
    owner = c["status"]["reservedFor"][0]
    p = pod(c["metadata"]["namespace"], owner["name"], templates={"single-gpu": "single-gpu"},
            node_name="conformance-test-np1-qcqc8-bpdtl-wv2gs", phase="Running")
    p["metadata"]["uid"] = owner["uid"]
    p["status"]["resourceClaimStatuses"] = [{"name": "single-gpu", "resourceClaimName": c["metadata"]["name"]}]
    return objs, c, p


def test_real_vks_claim_with_its_running_pod_is_healthy():
    slices, c, p = _vks()
    assert run([*slices, c, p]) == []


def test_allocated_claim_without_consumer_is_allocated_not_reserved():
    slices, c, p = _vks()
    c["status"]["reservedFor"] = []
    p["spec"].pop("nodeName")
    p["status"]["phase"] = "Pending"
    f = run([*slices, c, p])
    assert categories(f) == ["allocated_not_reserved"]
    assert ("Pod", p["metadata"]["namespace"], p["metadata"]["name"]) in names(f[0])


def test_allocated_not_reserved_waits_for_its_threshold():
    slices, c, p = _vks()
    c["status"]["reservedFor"] = []
    alloc = c["status"]["allocation"].get("allocationTimestamp")
    assert alloc  # the real claim carries one
    f = run([*slices, c, p], thresholds=Thresholds(allocated_not_reserved_seconds=10**9))
    assert f == []


def test_an_unreadable_allocation_time_counts_as_absent_not_as_never_old_enough():
    slices, c, p = _vks()
    c["status"]["reservedFor"] = []
    p["spec"].pop("nodeName")
    p["status"]["phase"] = "Pending"
    c["status"]["allocation"]["allocationTimestamp"] = "yesterday"
    f = run([*slices, c, p])
    assert categories(f) == ["allocated_not_reserved"]
    assert f[0].since == c["metadata"]["creationTimestamp"]


def test_reservation_for_a_pod_that_is_gone_is_reserved_for_missing_pod():
    slices, c, p = _vks()
    c["status"]["reservedFor"][0]["uid"] = "0000-gone"
    f = run([*slices, c, p])
    assert "reserved_for_missing_pod" in categories(f)


def test_snapshot_without_pods_does_not_call_reservations_missing():
    slices, c, _ = _vks()
    assert run([*slices, c]) == []


def test_old_deletion_with_finalizer_is_claim_stuck_deallocating():
    slices, c, p = _vks()
    c["metadata"]["deletionTimestamp"] = "2026-07-06T10:00:00Z"
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    f = run([*slices, c, p])
    assert categories(f) == ["claim_stuck_deallocating"]


def test_fresh_deletion_of_a_claim_still_used_by_a_live_pod_is_not_stuck():
    slices, c, p = _vks()
    c = copy.deepcopy(c)
    c["metadata"]["deletionTimestamp"] = "2026-11-20T10:59:00Z"
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    assert run([*slices, c, p]) == []


def test_pending_standalone_claim_nobody_uses_is_not_a_finding():
    assert run([*base_cluster(), claim("team-a", "spare", [request("gpu")])]) == []
