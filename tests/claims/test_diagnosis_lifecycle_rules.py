"""Claim lifecycle categories, starting from the real VKS claim (allocated and reserved)."""

from __future__ import annotations

import copy

from diag_helpers import base_cluster, categories, claim, load_yaml, names, node, of_kind, pod, request, run

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


def _unbound_with_nodes(pinned_spec: dict, others: int):
    """The VKS claim allocated but unreserved, its pod pending; its node gets ``pinned_spec``
    and ``others`` more nodes are cordoned."""
    slices, c, p = _vks()
    c["status"]["reservedFor"] = []
    p["spec"].pop("nodeName")
    p["status"]["phase"] = "Pending"
    pinned = node("conformance-test-np1-qcqc8-bpdtl-wv2gs")
    pinned["spec"] = pinned_spec
    cordoned = [node(f"other-{i}") for i in range(others)]
    for n in cordoned:
        n["spec"] = {"unschedulable": True}
    f = run([*slices, c, p, pinned, *cordoned])
    assert categories(f) == ["allocated_not_reserved"]
    return f[0]


def test_allocated_not_reserved_says_why_each_node_is_involved():
    # Every node refusing the pod was listed as involved with nothing saying why.
    f = _unbound_with_nodes({"unschedulable": True}, others=10)
    assert len([o for o in f.objects if o.kind == "Node"]) == 11
    assert "cordoned node conformance-test-np1-qcqc8-bpdtl-wv2gs" in f.summary
    assert "10 other node(s) refuse the pod (cordoned, or a taint it does not tolerate)" in f.summary
    assert f.evidence["allocation_nodes"] == ["conformance-test-np1-qcqc8-bpdtl-wv2gs"]


def test_allocated_not_reserved_says_the_pinned_node_has_a_taint_the_pod_does_not_tolerate():
    f = _unbound_with_nodes({"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}, others=0)
    assert "node conformance-test-np1-qcqc8-bpdtl-wv2gs, whose taint the pod does not tolerate" in f.summary
    assert "other node" not in f.summary


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
