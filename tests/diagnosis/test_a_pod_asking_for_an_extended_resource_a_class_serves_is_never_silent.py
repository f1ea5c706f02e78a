"""A pod asking for an extended resource a DeviceClass serves (the example driver's real
KEP-5004 demo: the implicit ``deviceclass.resource.kubernetes.io/gpu.example.com`` name) has no
claim until the scheduler finds a node; pending past the threshold it still gets a finding,
naming the resource and the class, and quoting the scheduler. A resource no class serves is
not DRA's business."""

from __future__ import annotations

from dx import categories, example_cluster, load_yaml, names, of_kind, run, scheduler_event

from inventory.kube import parse_time

NOW = parse_time("2026-11-20T11:00:00Z")
MSG = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable"


def _pods():
    pods = of_kind(load_yaml("k8s/dra/extended-resource-request__extended-resource-request.yaml"), "Pod")
    for p in pods:
        p["metadata"].update(uid=f"uid-{p['metadata']['name']}", creationTimestamp="2026-11-20T10:00:00Z")
        p["status"] = {"phase": "Pending"}
    return pods


def test_the_implicit_extended_resource_pod_pending_an_hour_gets_pending_unexplained():
    pod0, _pod1 = _pods()
    f = run([*example_cluster(), pod0, scheduler_event("extended-resource-request", "pod0", MSG)], now=NOW)
    assert categories(f) == ["pending_unexplained"]
    assert ("Pod", "extended-resource-request", "pod0") in names(f[0])
    assert "deviceclass.resource.kubernetes.io/gpu.example.com" in f[0].summary
    assert "cannot allocate all claims" in f[0].summary


def test_an_extended_resource_no_class_serves_gets_no_dra_finding():
    _, pod1 = _pods()  # example.com/gpu: the chart was not installed with that name
    assert run([*example_cluster(), pod1], now=NOW) == []


def test_a_young_extended_resource_pod_waits_for_the_threshold():
    pod0, _ = _pods()
    assert run([*example_cluster(), pod0], now=parse_time("2026-11-20T10:03:00Z")) == []
