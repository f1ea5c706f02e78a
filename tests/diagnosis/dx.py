"""Builders for the tests of tests/diagnosis: real objects from tests/fixtures (the shared
builders of tests/claims/diag_helpers plus the example driver's objects and the 1x8 H100
slice), changed per test as a cluster would change them."""

from __future__ import annotations

from typing import Any

from tests.claims.diag_helpers import (  # noqa: F401  (re-exported for the tests)
    NOW,
    allocation,
    base_cluster,
    categories,
    claim,
    h100_slices,
    load_yaml,
    names,
    node,
    nvidia_classes,
    of_kind,
    pod,
    request,
    run,
)

EXAMPLE_DRIVER = "gpu.example.com"
EXAMPLE_NODE = "dra-example-driver-cluster-worker"


def third_h100_node() -> list[dict[str, Any]]:
    """The real 1x8 H100 aicr slice (node ``node-a.example.internal``) and its node."""
    objs = load_yaml("k8s/resourceslices/aicr-eks-1x8-h100-gpu-and-computedomain-slices.v1.yaml")
    slices = [o for o in of_kind(objs, "ResourceSlice") if o["spec"]["driver"] == "gpu.nvidia.com"]
    return [node("node-a.example.internal", **{"nvidia.com/gpu.present": "true"}), *slices]


def gpu_devices(slices: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(node, pool, device) of every device of ``slices``, in slice order."""
    return [(s["spec"]["nodeName"], s["spec"]["pool"]["name"], d["name"])
            for s in slices if s["kind"] == "ResourceSlice" for d in s["spec"]["devices"]]


def hold(objs: list[dict[str, Any]], devices: list[tuple[str, str, str]], ns: str = "team-b",
         driver: str = "gpu.nvidia.com") -> list[dict[str, Any]]:
    """Running pods, one per device, each holding it through an allocated, reserved claim."""
    out = list(objs)
    for i, (node_name, pool, dev) in enumerate(devices):
        alloc = allocation(pool, dev)
        for r in alloc["devices"]["results"]:
            r["driver"] = driver
        c = claim(ns, f"busy-{i}", [request("gpu", "gpu.nvidia.com" if driver == "gpu.nvidia.com" else driver)],
                  status={"allocation": alloc,
                          "reservedFor": [{"resource": "pods", "name": f"busy-{i}", "uid": f"uid-pod-busy-{i}"}]})
        out += [c, pod(ns, f"busy-{i}", claims={"gpu": f"busy-{i}"}, node_name=node_name, phase="Running")]
    return out


def pending(req: dict[str, Any], ns: str = "team-a", name: str = "job") -> list[dict[str, Any]]:
    """An unallocated claim made from a template for an unscheduled pod (created 10:00)."""
    c = claim(ns, f"{name}-gpu", [req])
    c["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": name, "uid": f"uid-pod-{name}", "controller": True}]
    c["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    p = pod(ns, name, templates={"gpu": "t"})
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
    return [c, p]


def scheduler_event(ns: str, pod_name: str, message: str, when: str = "2026-11-20T10:59:00Z") -> dict[str, Any]:
    """A FailedScheduling event as kube-scheduler writes it (events.k8s.io: eventTime, series)."""
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{pod_name}.18e6", "namespace": ns, "uid": f"uid-ev-{pod_name}",
                     "creationTimestamp": "2026-11-20T10:00:01Z"},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod_name, "uid": f"uid-pod-{pod_name}"},
        "reason": "FailedScheduling", "type": "Warning", "message": message,
        "eventTime": "2026-11-20T10:00:01.000000Z", "firstTimestamp": None, "lastTimestamp": None, "count": None,
        "series": {"count": 12, "lastObservedTime": when},
        "reportingComponent": "default-scheduler", "action": "Scheduling",
    }


def scheduler_pod(version: str) -> dict[str, Any]:
    """The kube-scheduler static pod of a kubeadm control plane at ``version`` (``v1.35.2``)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "kube-scheduler-cp-node-01", "namespace": "kube-system", "uid": "uid-sched",
                     "labels": {"component": "kube-scheduler", "tier": "control-plane"},
                     "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {"nodeName": "cp-node-01", "containers": [{
            "name": "kube-scheduler", "image": f"registry.k8s.io/kube-scheduler:{version}",
            "command": ["kube-scheduler", "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"]}]},
        "status": {"phase": "Running"},
    }


def example_class() -> dict[str, Any]:
    """The example driver's DeviceClass as its Helm chart creates it (selects its driver)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": EXAMPLE_DRIVER, "uid": "uid-class-example"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{EXAMPLE_DRIVER}'"}}]}}


def example_cluster() -> list[dict[str, Any]]:
    """The example driver's real mock-GPU slice (8 GPUs on one kind worker), its node and class."""
    slices = load_yaml("k8s/resourceslices/dra-example-driver-mock-gpus.v1.yaml")
    return [node(EXAMPLE_NODE), example_class(), *of_kind(slices, "ResourceSlice")]


def claim_from_template(template: dict[str, Any], pod_obj: dict[str, Any], entry: str,
                        created: str) -> dict[str, Any]:
    """The claim the controller makes from ``template`` for ``pod_obj``'s entry ``entry``."""
    ns, pod_name = pod_obj["metadata"]["namespace"], pod_obj["metadata"]["name"]
    name = f"{pod_name}-{entry}-x7k2p"
    pod_obj.setdefault("status", {})["resourceClaimStatuses"] = [{"name": entry, "resourceClaimName": name}]
    pod_obj["metadata"].setdefault("uid", f"uid-pod-{pod_name}")
    pod_obj["metadata"].setdefault("creationTimestamp", created)
    pod_obj["status"].setdefault("phase", "Pending")
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-claim-{name}", "creationTimestamp": created,
                     "annotations": {"resource.kubernetes.io/pod-claim-name": entry},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name,
                                          "uid": pod_obj["metadata"]["uid"], "controller": True}]},
        "spec": template["spec"]["spec"],
        "status": {},
    }


def gpu_plugin_pod(node_name: str, name: str = "nvidia-dra-driver-gpu-kubelet-plugin-7x2kq",
                   containers: tuple[str, ...] = ("compute-domains", "gpus"), labelled: bool = True,
                   env: dict[str, str] | None = None) -> dict[str, Any]:
    """The NVIDIA DRA driver chart's kubelet-plugin pod on ``node_name``: its component label,
    its DaemonSet owner, the ``compute-domains`` and ``gpus`` containers."""
    labels = {"app.kubernetes.io/name": "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-component": "kubelet-plugin"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "nvidia-dra-driver-gpu", "uid": f"uid-{name}",
                     "creationTimestamp": "2026-11-19T08:00:00Z", "labels": labels if labelled else {},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "controller": True,
                                          "name": "nvidia-dra-driver-gpu-kubelet-plugin", "uid": "uid-ds-plugin"}]},
        "spec": {"nodeName": node_name, "containers": [
            {"name": c, "image": "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0",
             "env": [{"name": k, "value": v} for k, v in (env or {}).items()]} for c in containers]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": c, "ready": True, "restartCount": 0,
                                          "state": {"running": {"startedAt": "2026-11-19T08:00:05Z"}}}
                                         for c in containers]},
    }
