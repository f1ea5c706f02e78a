"""The demo cluster: customer hardware, healthy workloads and one stuck claim per diagnosis category.

Pure: no Django, no clock (``now`` is passed in). ``build_demo(now)`` returns the objects and a
DCGM exporter scrape; ``write_demo(folder, now)`` writes them as a snapshot folder
(``cluster.json`` + ``dcgm-exporter.prom``) that ``inventory.sources.SnapshotSource`` reads.
The ``load_demo`` management command writes it under ``var/demo/`` at load time, so ages read
right ("Pending for 42 min"), and syncs it through ``inventory.sync.sync_cluster``.

Hardware the customers run: two 2x RTX PRO 6000 Blackwell Server
Edition entry servers (one in MIG mode ``all-1g.24gb``) and a third whose driver publishes an
empty pool; five 4x H200 NVL inference nodes (one ``all-balanced``, one custom MIG layout, one
cordoned and without the GPU taint, one whose driver publishes no slice at all); three 8x H200
NVL training nodes (one half in ``1g.18gb`` MIG instances). Shapes come from ``devtools.fleet``.

Stuck claims, modelled on the project's diagnosis cases (copies in ``tests/fixtures/cases``;
category names from the diagnosis vocabulary, ``claims/diagnosis/findings.py``); where each
shape came from: ``demo/SOURCES.md``:
``no_matching_device`` (selector memory >= 200Gi), ``capacity_exhausted`` (every whole RTX PRO
6000 taken), ``device_class_missing`` (``gpu.example.com``), ``claim_not_found``,
``template_claim_missing``, ``allocated_not_reserved`` (25 min, node cordoned),
``reserved_for_missing_pod``, ``claim_stuck_deallocating`` (47 min, delete-protection finalizer),
``driver_not_publishing_on_node`` and ``driver_publishing_empty_pool``.

DCGM scrape: label shape of the real aicr H100 sample (``gpu``, ``UUID``, ``pci_bus_id``,
``device``, ``modelName``, ``Hostname``, ``DCGM_FI_DRIVER_VERSION``, plus ``container``,
``namespace``, ``pod``, ``pod_uid`` for GPUs a pod uses); MIG series add ``GPU_I_PROFILE`` and
``GPU_I_ID`` and carry ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` instead of ``DCGM_FI_DEV_GPU_UTIL``
(which DCGM does not produce per MIG instance); MIG series also carry the exporter's DRA labels
(``dra_pool_name``, ``dra_device_name``, ``dra_mig_device_uuid``; the claim's for a held
instance), which tell apart instances of one profile on one GPU.

Values and history: every reading is a real one, from our NVML trace of one H200 (0.5 s
sampling, 40 s: idle, 20 s of bf16 matrix products, idle with memory held; copy in
``demo/nvml/``). The hour before ``now`` is written as a Prometheus range-query answer
(``dcgm-history.range.json``, what the charts of a snapshot cluster read), one reading per 20 s
step from the trace phase the device is in: GPUs a running pod holds are busy since the pod
started (idle before), three held GPUs went idle a third of the way in (their workload stopped,
the device is still held), one GPU no claim holds is busy all hour, the rest idle. The
exporter page is the last step. Watts are scaled by 600/700 (the demo boards are 600 W parts;
the H200 was read at 700 W); MIG instances take the GPU's utilization as graphics-engine
activity and its framebuffer use scaled to their memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .fleet import (
    GPU_MODELS,
    ClusterBuilder,
    DeviceInfo,
    NodeSpec,
    _ts,
    all_smallest,
    balanced,
    place_profiles,
)

DEMO_CLUSTER = "demo"
DEMO_SEED = 20261112
# Real evidence served as clusters of their own: name -> folder under the project's ``demo/``.
REAL_CLUSTERS = {"aicr-h100": "aicr-h100", "vks-a100": "vks-a100"}
NODES_TOTAL = 11
_SCHED_TAIL = f"still not schedulable, preemption: 0/{NODES_TOTAL} nodes are available: {NODES_TOTAL} Preemption is not helpful for scheduling."
CANNOT_ALLOCATE = f"0/{NODES_TOTAL} nodes are available: {NODES_TOTAL} cannot allocate all claims. {_SCHED_TAIL}"
RTX = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
H200_NVL = "NVIDIA H200 NVL"


@dataclass
class DemoSnapshot:
    """``objects``: raw v1 Kubernetes objects. ``prom``: file name -> DCGM exporter text.
    ``ranges``: file name -> a Prometheus ``/api/v1/query_range`` answer (JSON text)."""

    objects: list[dict[str, Any]]
    prom: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _nodes() -> list[NodeSpec]:
    h200_mixed = place_profiles(H200_NVL, ["3g.71gb", "2g.35gb", "1g.35gb"])
    d = timedelta
    return [
        NodeSpec("gpu-rtx-01", "rtx-pro-6000", 2, "rtx-pro-entry", driver="580.105.08", age=d(days=64)),
        NodeSpec("gpu-rtx-02", "rtx-pro-6000", 2, "rtx-pro-entry", mig=dict.fromkeys(range(2), all_smallest("rtx-pro-6000")),
                 mig_config="all-1g.24gb", driver="580.105.08", age=d(days=64)),
        NodeSpec("gpu-rtx-03", "rtx-pro-6000", 2, "rtx-pro-entry", driver="580.105.08", slice="empty", age=d(days=2, hours=3)),
        NodeSpec("gpu-h200-01", "h200-nvl", 4, "h200-nvl-inference", driver="580.159.04", age=d(days=41)),
        NodeSpec("gpu-h200-02", "h200-nvl", 4, "h200-nvl-inference", mig=dict.fromkeys(range(4), balanced("h200-nvl")),
                 mig_config="all-balanced", driver="580.159.04", age=d(days=41)),
        NodeSpec("gpu-h200-03", "h200-nvl", 4, "h200-nvl-inference", mig={0: all_smallest("h200-nvl"), 1: h200_mixed},
                 mig_config="custom-2-of-4-mixed", driver="580.159.04", age=d(days=33)),
        NodeSpec("gpu-h200-04", "h200-nvl", 4, "h200-nvl-inference", driver="580.159.04", tainted=False,
                 unschedulable=True, age=d(days=33)),
        NodeSpec("gpu-h200-05", "h200-nvl", 4, "h200-nvl-inference", driver="580.159.04", slice="none", age=d(hours=5)),
        NodeSpec("gpu-h200-11", "h200-nvl", 8, "h200-nvl-training", driver="580.159.04", age=d(days=90)),
        NodeSpec("gpu-h200-12", "h200-nvl", 8, "h200-nvl-training", mig=dict.fromkeys(range(4), all_smallest("h200-nvl")),
                 mig_config="custom-4-of-8-1g.18gb", driver="580.159.04", age=d(days=90)),
        NodeSpec("gpu-h200-13", "h200-nvl", 8, "h200-nvl-training", driver="580.159.04", age=d(days=90)),
    ]


def _dev(b: ClusterBuilder, node: str, name: str) -> DeviceInfo:
    return b.devices[(node, name)]


def _plugin_daemonset(b: ClusterBuilder) -> dict[str, Any]:
    ns, name = "gpu-operator", "nvidia-dra-driver-gpu-kubelet-plugin"
    gpu_nodes = len(b.nodes)
    return b.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "creationTimestamp": _ts(b.ago(days=95)),
                "generation": 3,
                "labels": {"app.kubernetes.io/name": "nvidia-dra-driver-gpu", "app.kubernetes.io/component": "kubelet-plugin"},
                "name": name,
                "namespace": ns,
                "resourceVersion": b.rv(),
                "uid": b.uid("DaemonSet", ns, name),
            },
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-component": "kubelet-plugin"}},
                "template": {
                    "metadata": {"labels": {"app.kubernetes.io/name": "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-component": "kubelet-plugin"}},
                    "spec": {
                        "containers": [{"image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.1", "name": "gpus"}],
                        "nodeSelector": {"nvidia.com/gpu.deploy.dra-driver": "true"},
                        "priorityClassName": "system-node-critical",
                        "tolerations": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}],
                    },
                },
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "RollingUpdate"},
            },
            "status": {
                "currentNumberScheduled": gpu_nodes,
                "desiredNumberScheduled": gpu_nodes,
                "numberAvailable": gpu_nodes - 2,
                "numberMisscheduled": 0,
                "numberReady": gpu_nodes - 2,
                "numberUnavailable": 2,
                "observedGeneration": 3,
                "updatedNumberScheduled": gpu_nodes,
            },
        }
    )


def _plugin_pods(b: ClusterBuilder, ds: dict[str, Any]) -> None:
    """One kubelet-plugin pod per GPU node; crash-looping on the two broken nodes."""
    ns = ds["metadata"]["namespace"]
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds["metadata"]["name"], "uid": ds["metadata"]["uid"]}
    image = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.1"
    for node, spec in b.node_specs.items():
        name = f"nvidia-dra-driver-gpu-kubelet-plugin-{b.suffix()}"
        created = b.now - spec.age + timedelta(minutes=9)
        pod = b.pod(ns, name, b.uid("Pod", ns, name), owner, ds["spec"]["template"]["metadata"]["labels"],
                    created=created, node=node, image=image)
        pod["spec"]["containers"][0]["name"] = "gpus"
        pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "128Mi"}}
        pod["spec"]["priorityClassName"] = "system-node-critical"
        pod["spec"]["restartPolicy"] = "Always"
        cs = pod["status"]["containerStatuses"][0]
        cs["name"] = "gpus"
        if spec.slice == "full":
            continue
        if spec.slice == "none":
            reason = "failed to create driver: error initializing NVML: Driver Not Loaded"
            restarts = 58
        else:
            reason = "error enumerating GPU devices: error getting MIG mode for GPU 1 (0000:41:00.0): Unknown Error"
            restarts = 21
        cs.update(
            {
                "ready": False,
                "restartCount": restarts,
                "started": False,
                "state": {"waiting": {"message": "back-off 5m0s restarting failed container=gpus pod=" + name + "_" + ns + "(" + pod["metadata"]["uid"] + ")", "reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": _ts(b.ago(minutes=3)), "message": reason, "reason": "Error", "startedAt": _ts(b.ago(minutes=3, seconds=4))}},
            }
        )
        for c in pod["status"]["conditions"]:
            if c["type"] in ("Ready", "ContainersReady"):
                c.update({"status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [gpus]",
                          "lastTransitionTime": _ts(b.ago(minutes=3))})
        b.kubelet_event(pod, node, "BackOff", "Back-off restarting failed container gpus in pod " + name + "_" + ns + "(" + pod["metadata"]["uid"] + ")",
                        at=b.ago(minutes=58), last=b.ago(minutes=2), count=restarts * 4 + 3, type_="Warning")


def build_demo(now: datetime, trace_text: str | None = None) -> DemoSnapshot:
    """The demo cluster at ``now`` (timezone-aware): objects, ``dcgm-exporter.prom`` and the
    hour of DCGM history before ``now`` (``dcgm-history.range.json``), both built from the real
    H200 NVML trace ``trace_text`` (default: the copy at ``NVML_TRACE``)."""
    b = ClusterBuilder(DEMO_SEED, now)
    notes: list[str] = []
    b.device_classes(created=now - timedelta(days=95))
    for spec in _nodes():
        b.node(spec)
    ds = _plugin_daemonset(b)
    _plugin_pods(b, ds)

    # -- templates -----------------------------------------------------------------------------
    rtx_sel = f"device.attributes['gpu.nvidia.com'].productName == '{RTX}'"
    h200_sel = f"device.attributes['gpu.nvidia.com'].productName == '{H200_NVL}'"
    t_rtx = b.template("team-a", "rtx-pro-gpu", selectors=[rtx_sel], created=now - timedelta(days=30))
    t_h200x4 = b.template("team-a", "h200-x4", request="gpus", selectors=[h200_sel], count=4, created=now - timedelta(days=30))
    t_h200x8 = b.template("ml-platform", "h200-x8", request="gpus", selectors=[h200_sel], count=8, created=now - timedelta(days=60))
    t_h200 = b.template("team-b", "h200-gpu", selectors=[h200_sel], created=now - timedelta(days=30))
    t_h200_ml = b.template("ml-platform", "h200-gpu", selectors=[h200_sel], created=now - timedelta(days=60))
    t_mig24 = b.template("team-b", "mig-1g24gb", request="mig", device_class="mig.nvidia.com",
                         selectors=["device.attributes['gpu.nvidia.com'].profile == '1g.24gb'"], created=now - timedelta(days=20))
    t_mig18 = b.template("research", "mig-1g18gb", request="mig", device_class="mig.nvidia.com",
                         selectors=["device.attributes['gpu.nvidia.com'].profile == '1g.18gb'"], created=now - timedelta(days=20))
    t_mig71 = b.template("research", "mig-3g71gb", request="mig", device_class="mig.nvidia.com",
                         selectors=["device.attributes['gpu.nvidia.com'].profile == '3g.71gb'"], created=now - timedelta(days=20))
    t_mig35 = b.template("team-b", "mig-2g35gb", request="mig", device_class="mig.nvidia.com",
                         selectors=["device.attributes['gpu.nvidia.com'].profile == '2g.35gb'"], created=now - timedelta(days=20))

    # -- healthy workloads ---------------------------------------------------------------------
    h = timedelta(hours=1)
    use: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for i in range(2):
        pod, claim = b.workload("team-a", "llm-serve-rtx", state="in_use", template=t_rtx,
                                devices=[_dev(b, "gpu-rtx-01", f"gpu-{i}")], age=h * (30 + i))
        use[f"gpu-rtx-01/gpu-{i}"] = (pod, claim)
    for name in ("gpu-0-mig-1g24gb-14-0", "gpu-0-mig-1g24gb-14-1", "gpu-1-mig-1g24gb-14-2"):
        use[f"gpu-rtx-02/{name}"] = b.workload("team-b", "notebook-small", state="in_use", template=t_mig24,
                                               devices=[_dev(b, "gpu-rtx-02", name)], age=h * 8, image="quay.io/jupyter/pytorch-notebook:cuda12-2025-10-20")
    use["gpu-h200-11"] = b.workload("team-a", "vllm-llama-70b", state="in_use", template=t_h200x4,
                                    devices=[_dev(b, "gpu-h200-11", f"gpu-{i}") for i in range(4)], age=h * 52)
    use["gpu-h200-13"] = b.workload("ml-platform", "pretrain-run-17", state="in_use", template=t_h200x8,
                                    devices=[_dev(b, "gpu-h200-13", f"gpu-{i}") for i in range(8)], age=h * 19,
                                    owner_kind="Job", image="nvcr.io/nvidia/pytorch:25.10-py3")
    use["gpu-h200-01/gpu-0"] = b.workload("team-b", "embeddings", state="in_use", template=t_h200,
                                          devices=[_dev(b, "gpu-h200-01", "gpu-0")], age=h * 75)
    for name in ("gpu-0-mig-1g18gb-19-0", "gpu-0-mig-1g18gb-19-1", "gpu-0-mig-1g18gb-19-2"):
        use[f"gpu-h200-03/{name}"] = b.workload("research", "notebook", state="in_use", template=t_mig18,
                                                devices=[_dev(b, "gpu-h200-03", name)], age=h * 6, image="quay.io/jupyter/pytorch-notebook:cuda12-2025-10-20")
    use["gpu-h200-03/gpu-1-mig-3g71gb-9-4"] = b.workload("research", "vlm-eval", state="in_use", template=t_mig71,
                                                         devices=[_dev(b, "gpu-h200-03", "gpu-1-mig-3g71gb-9-4")], age=timedelta(minutes=38))
    for minor in range(2):
        name = f"gpu-{minor}-mig-2g35gb-14-2"
        use[f"gpu-h200-02/{name}"] = b.workload("team-b", "reranker", state="in_use", template=t_mig35,
                                                devices=[_dev(b, "gpu-h200-02", name)], age=h * 20)
    for minor, start in ((0, 0), (0, 1), (1, 3), (2, 5)):
        name = f"gpu-{minor}-mig-1g18gb-19-{start}"
        use[f"gpu-h200-12/{name}"] = b.workload("research", "notebook", state="in_use", template=t_mig18,
                                                devices=[_dev(b, "gpu-h200-12", name)], age=h * (3 + start),
                                                image="quay.io/jupyter/pytorch-notebook:cuda12-2025-10-20")
    # A pod being deleted right now (claim deleting for seconds: normal, not stuck).
    b.workload("team-b", "reranker-canary", state="deleting", template=t_mig35,
               devices=[_dev(b, "gpu-h200-02", "gpu-2-mig-2g35gb-14-2")], age=h * 3, deleting_age=timedelta(seconds=12))

    # -- stuck: no_matching_device -------------------------------------------------------------
    t_200 = b.template("team-a", "gpu-200gi", selectors=["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) >= 0"],
                       created=now - timedelta(minutes=44))
    b.workload("team-a", "llm-405b", state="pending", template=t_200, age=timedelta(minutes=42), message=CANNOT_ALLOCATE)
    notes.append("no_matching_device: team-a llm-405b asks for >= 200Gi; the largest GPU publishes 143771Mi")

    # -- stuck: capacity_exhausted (every whole RTX PRO 6000 is taken) -------------------------
    t_rtx_b = b.template("team-b", "rtx-pro-gpu", selectors=[rtx_sel], created=now - timedelta(days=3))
    b.workload("team-b", "render-worker", state="pending", template=t_rtx_b, age=timedelta(minutes=17), message=CANNOT_ALLOCATE,
               image="nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04")
    notes.append("capacity_exhausted: team-b render-worker wants a whole RTX PRO 6000; both are held by llm-serve-rtx")

    # -- stuck: device_class_missing -----------------------------------------------------------
    t_legacy = b.template("team-b", "legacy-gpu", device_class="gpu.example.com", created=now - timedelta(minutes=12))
    b.workload("team-b", "batch-infer", state="pending", template=t_legacy, age=timedelta(minutes=9),
               message=f"0/{NODES_TOTAL} nodes are available: request gpu: device class gpu.example.com does not exist. "
               f"no new claims to deallocate, preemption: 0/{NODES_TOTAL} nodes are available: {NODES_TOTAL} Preemption is not helpful for scheduling.")
    notes.append("device_class_missing: team-b batch-infer requests DeviceClass gpu.example.com")

    # -- stuck: claim_not_found (no event: rejected in PreEnqueue) -----------------------------
    ns, app = "team-b", "embedding-svc"
    pod_name = f"{app}-6c9f8d7b5-{b.suffix()}"
    rs = f"{app}-6c9f8d7b5"
    pod = b.pod(ns, pod_name, b.uid("Pod", ns, pod_name),
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": b.uid("ReplicaSet", ns, rs)},
                {"app": app, "pod-template-hash": "6c9f8d7b5"}, created=b.ago(minutes=26),
                claims=[{"name": "gpu", "resourceClaimName": "shared-embedding-gpu"}])
    del pod["status"]["conditions"]
    notes.append("claim_not_found: team-b embedding-svc references claim shared-embedding-gpu, which does not exist")

    # -- stuck: template_claim_missing ---------------------------------------------------------
    ns, app = "team-a", "eval-harness"
    pod_name = f"{app}-0"
    pod = b.pod(ns, pod_name, b.uid("Pod", ns, pod_name),
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": b.uid("StatefulSet", ns, app)},
                {"app": app, "apps.kubernetes.io/pod-index": "0", "statefulset.kubernetes.io/pod-name": pod_name},
                created=b.ago(minutes=33), claims=[{"name": "gpu", "resourceClaimTemplateName": "eval-gpu"}])
    del pod["status"]["conditions"]
    b.core_event(pod, "FailedResourceClaimCreation",
                 'PodResourceClaim gpu: resource claim template "eval-gpu": resourceclaimtemplate.resource.k8s.io "eval-gpu" not found',
                 component="resource_claim", first=b.ago(minutes=33), last=b.ago(minutes=1), count=19, type_="Warning")
    notes.append("template_claim_missing: team-a eval-harness-0 references ResourceClaimTemplate eval-gpu, which does not exist")

    # -- stuck: allocated_not_reserved (node cordoned after allocation, bind failed) -----------
    pod, claim = b.workload(
        "ml-platform", "finetune-8b", state="allocated", template=t_h200_ml, devices=[_dev(b, "gpu-h200-04", "gpu-1")],
        age=timedelta(minutes=25, seconds=8), allocated_age=timedelta(minutes=25), owner_kind="Job",
        image="nvcr.io/nvidia/pytorch:25.10-py3",
        message=f"0/{NODES_TOTAL} nodes are available: 1 node(s) were unschedulable, {NODES_TOTAL - 1} node(s) had untolerated taint "
        f"{{nvidia.com/gpu: present}}. {_SCHED_TAIL}",
    )
    assert pod is not None
    pod["spec"]["tolerations"] = [t for t in pod["spec"]["tolerations"] if t["key"] != "nvidia.com/gpu"]
    b.core_event(b.nodes["gpu-h200-04"], "NodeNotSchedulable", "Node gpu-h200-04 status is now: NodeNotSchedulable",
                 component="kubelet", host="gpu-h200-04", first=b.ago(minutes=24, seconds=57))
    b.core_event(pod, "FailedScheduling", 'binding rejected: running Bind plugin "DefaultBinder": etcdserver: request timed out',
                 component="default-scheduler", first=b.ago(minutes=24, seconds=50), type_="Warning")
    notes.append("allocated_not_reserved: ml-platform finetune-8b claim allocated gpu-h200-04/gpu-1 25 min ago, reservedFor empty")

    # -- stuck: reserved_for_missing_pod (a hand-made shared claim, its pod is gone) ------------
    gone_uid = b.uid("Pod", "team-a", "jupyter-alice-7f9c6d5b8-x2x4k")
    dev = _dev(b, "gpu-h200-01", "gpu-1")
    b.taken.add((dev.node, dev.name))
    name = "jupyter-shared-gpu"
    b.add({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "creationTimestamp": _ts(b.ago(days=3, hours=2)),
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "name": name,
            "namespace": "team-a",
            "resourceVersion": b.rv(),
            "uid": b.uid("ResourceClaim", "team-a", name),
        },
        "spec": {"devices": {"requests": [{"exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": "gpu.nvidia.com",
                                                       "selectors": [{"cel": {"expression": h200_sel}}]}, "name": "gpu"}]}},
        "status": {
            "allocation": {
                "allocationTimestamp": _ts(b.ago(days=3, hours=1, minutes=58)),
                "devices": {"results": [{"device": dev.name, "driver": "gpu.nvidia.com", "pool": dev.pool, "request": "gpu"}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [dev.node]}]}]},
            },
            "reservedFor": [{"name": "jupyter-alice-7f9c6d5b8-x2x4k", "resource": "pods", "uid": gone_uid}],
        },
    })
    notes.append("reserved_for_missing_pod: team-a jupyter-shared-gpu is reserved for a pod uid that no longer exists")

    # -- stuck: claim_stuck_deallocating (pod gone, finalizer stays 47 min) ---------------------
    b.workload("research", "sweep-lr", state="deleting", template=t_mig18, devices=[_dev(b, "gpu-h200-12", "gpu-3-mig-1g18gb-19-6")],
               age=h * 9, deleting_age=timedelta(minutes=47), pod_present=False, owner_kind="Job")
    notes.append("claim_stuck_deallocating: research sweep-lr claim deleting for 47 min with delete-protection finalizer")
    notes.append("driver_not_publishing_on_node: gpu-h200-05 has GPU labels and no ResourceSlice")
    notes.append("driver_publishing_empty_pool: gpu-rtx-03's slice has zero devices")

    prom, history = _telemetry(b, read_trace(trace_text if trace_text is not None else NVML_TRACE.read_text(encoding="utf-8")))
    return DemoSnapshot(objects=b.objects, prom={"dcgm-exporter.prom": prom}, ranges={HISTORY_FILE: history}, notes=notes)


# -- DCGM ---------------------------------------------------------------------------------------

#: The real H200 NVML readings the demo's telemetry is built from (copy: ``demo/SOURCES.md``).
NVML_TRACE = Path(__file__).resolve().parent.parent / "demo" / "nvml" / "h200-nvml-timeseries.csv"
HISTORY_FILE = "dcgm-history.range.json"
HISTORY_S = 3600
HISTORY_STEP_S = 20
#: The demo boards (RTX PRO 6000 Server Edition, H200 NVL) are 600 W parts; the H200 read was
#: at its 700 W default power limit (``h200-nvidia-smi-q.txt``), so its watts are scaled.
POWER_SCALE = 600.0 / 700.0
#: Allocated GPUs whose workload finished its work but still holds the device (and memory).
_IDLE_HOLDERS = {("gpu-rtx-01", "gpu-1"), ("gpu-h200-01", "gpu-0"), ("gpu-h200-01", "gpu-1")}
#: A GPU no claim holds that something outside DRA keeps busy.
_BUSY_UNCLAIMED = {("gpu-h200-01", "gpu-3")}

_HELP = {
    "DCGM_FI_DEV_GPU_UTIL": "GPU utilization (in %).",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "Memory utilization (in %).",
    "DCGM_FI_DEV_FB_USED": "Framebuffer memory used (in MiB).",
    "DCGM_FI_DEV_FB_FREE": "Framebuffer memory free (in MiB).",
    "DCGM_FI_DEV_GPU_TEMP": "GPU temperature (in C).",
    "DCGM_FI_DEV_POWER_USAGE": "Power draw (in W).",
    "DCGM_FI_DEV_SM_CLOCK": "SM clock frequency (in MHz).",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "Ratio of time the graphics engine is active.",
}


@dataclass(frozen=True)
class TraceRow:
    """One NVML reading of the real H200 trace (units: %, MiB, W, C, MHz)."""

    util: float
    mem_util: float
    fb_used: float
    power: float
    temp: float
    sm_clock: float


@dataclass(frozen=True)
class Trace:
    """The real trace cut into its phases: ``idle`` before the load; ``ramp_up`` (the readings
    while the load starts); ``load``, the plateau (utilization >= 50 %, framebuffer and power at
    their load level); ``ramp_down``; ``after``, idle again with memory still held once the
    power has settled. Ramps are played once, where a device changes phase; the steady phases
    are played in turn."""

    idle: tuple[TraceRow, ...]
    ramp_up: tuple[TraceRow, ...]
    load: tuple[TraceRow, ...]
    ramp_down: tuple[TraceRow, ...]
    after: tuple[TraceRow, ...]


def read_trace(text: str) -> Trace:
    """``h200-nvml-timeseries.csv`` (columns ``gpu_util_pct``, ``mem_util_pct``,
    ``fb_used_mib``, ``power_w``, ``temp_c``, ``sm_clock_mhz``) cut into its phases. Raises
    ``ValueError`` when a column is missing or a steady phase is empty."""
    import csv
    import io

    rows = []
    for r in csv.DictReader(io.StringIO(text)):
        rows.append(TraceRow(float(r["gpu_util_pct"]), float(r["mem_util_pct"]), float(r["fb_used_mib"]),
                             float(r["power_w"]), float(r["temp_c"]), float(r["sm_clock_mhz"])))  # fmt: skip
    active = [i for i, r in enumerate(rows) if r.util > 0]
    if not active:
        raise ValueError("the NVML trace has no load phase")
    top_fb = max(rows[i].fb_used for i in active)
    top_w = max(rows[i].power for i in active)
    plateau = [i for i in active if rows[i].util >= 50 and rows[i].fb_used == top_fb and rows[i].power >= 0.85 * top_w]
    if not plateau:
        raise ValueError("the NVML trace has no load plateau")
    tail = rows[active[-1] + 1 :]
    settled_w = min((r.power for r in tail), default=0.0) * 1.05
    settle = next((active[-1] + 1 + k for k, r in enumerate(tail) if r.power <= settled_w), len(rows))
    idle, after = rows[: active[0]], rows[settle:]
    if not idle or not after:
        raise ValueError("the NVML trace needs idle readings before and after its load")
    return Trace(tuple(idle), tuple(rows[active[0] : plateau[0]]), tuple(rows[i] for i in plateau),
                 tuple(rows[plateau[-1] + 1 : settle]), tuple(after))  # fmt: skip


@dataclass(frozen=True)
class _Target:
    """A device the exporter reports: its phase plan over the hour and its workload."""

    dev: DeviceInfo
    plan: tuple[tuple[float, str], ...]  # (seconds into the hour from which, phase), ascending
    pod: dict[str, Any] | None
    claim: dict[str, Any] | None


def _phase(plan: tuple[tuple[float, str], ...], at_s: float) -> str:
    current = plan[0][1]
    for since, phase in plan:
        if at_s >= since:
            current = phase
    return current


def _holders(b: ClusterBuilder) -> dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any] | None]]:
    """(node, device) -> (claim, running pod it is reserved for, or None), from the objects."""
    pods = {o["metadata"]["uid"]: o for o in b.objects if o.get("kind") == "Pod"}
    out: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any] | None]] = {}
    for o in b.objects:
        if o.get("kind") != "ResourceClaim":
            continue
        status = o.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        running = None
        for ref in status.get("reservedFor") or []:
            pod = pods.get(ref.get("uid"))
            if pod is not None and pod["status"].get("phase") == "Running" and "deletionTimestamp" not in pod["metadata"]:
                running = pod
        for r in results:
            out[(r["pool"], r["device"])] = (o, running)
    return out


def _age_s(obj: dict[str, Any], now: datetime) -> float:
    created = datetime.fromisoformat(obj["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    return (now - created).total_seconds()


def _targets(b: ClusterBuilder) -> list[_Target]:
    """Every device of a node whose driver publishes it (whole GPUs and MIG instances), with
    its plan and the claim and running pod that hold it."""
    holders = _holders(b)
    out = []
    for key, d in sorted(b.devices.items(), key=lambda kv: (kv[0][0], kv[1].minor, kv[0][1])):
        claim, pod = holders.get(key, (None, None))
        if key in _IDLE_HOLDERS:
            plan: tuple[tuple[float, str], ...] = ((0, "load"), (HISTORY_S / 3, "after"))
        elif key in _BUSY_UNCLAIMED:
            plan = ((0, "load"),)
        elif pod is not None:
            plan = ((0, "idle"), (max(0.0, HISTORY_S - _age_s(pod, b.now)), "load"))
        else:
            plan = ((0, "idle"),)
        out.append(_Target(d, plan, pod, claim))
    return out


def _play(plan: tuple[tuple[float, str], ...], steps: list[int], trace: Trace, offset: int) -> list[TraceRow]:
    """One trace reading per step: the steady phase the plan puts there, its readings in turn
    from ``offset``; where the phase changes to ``load`` (from idle) or from ``load`` (to idle
    with memory held) the trace's own ramp readings come first."""
    steady = {"idle": trace.idle, "load": trace.load, "after": trace.after}
    out: list[TraceRow] = []
    ramp: list[TraceRow] = []
    prev = None
    for i, ts in enumerate(steps):
        phase = _phase(plan, ts - steps[0])
        if prev is not None and phase != prev:
            ramp = list(trace.ramp_up if phase == "load" else trace.ramp_down if prev == "load" else ())
        prev = phase
        if ramp:
            out.append(ramp.pop(0))
            continue
        seq = steady[phase]
        out.append(seq[(i + offset) % len(seq)])
    return out


def _bus(pci: str) -> str:
    """Slice ``0000:1b:00.0`` -> exporter ``00000000:1B:00.0``."""
    dom, bus, rest = pci.split(":", 2)
    return f"0000{dom}:{bus.upper()}:{rest}"


def _labels(d: DeviceInfo, t: _Target | None, gi: tuple[str, int] | None = None) -> dict[str, str]:
    labels = {
        "gpu": str(d.minor), "UUID": d.parent_uuid or d.uuid, "pci_bus_id": _bus(d.pci_bus_id),
        "device": f"nvidia{d.minor}", "modelName": d.product,
    }  # fmt: skip
    if gi:
        labels |= {"GPU_I_PROFILE": gi[0], "GPU_I_ID": str(gi[1])}
    labels |= {"Hostname": d.node, "DCGM_FI_DRIVER_VERSION": d.driver_version}
    if t is not None and t.pod is not None:
        meta = t.pod["metadata"]
        labels |= {"container": "main", "namespace": meta["namespace"], "pod": meta["name"], "pod_uid": ""}
    if d.type == "mig":
        # dcgm-exporter in DRA mode (KUBERNETES_ENABLE_DRA): the demo's exporter names the slice
        # device of every MIG instance, and the claim of one a claim holds.
        labels |= {"dra_pool_name": d.pool, "dra_device_name": d.name, "dra_mig_profile": d.profile, "dra_mig_device_uuid": d.uuid}
        if t is not None and t.claim is not None:
            meta = t.claim["metadata"]
            labels |= {"dra_claim_name": meta["name"], "dra_claim_namespace": meta["namespace"]}
    return labels


def _whole_values(row: TraceRow, memory_mi: int) -> dict[str, float]:
    used = min(row.fb_used, memory_mi)
    return {
        "DCGM_FI_DEV_GPU_UTIL": row.util, "DCGM_FI_DEV_MEM_COPY_UTIL": row.mem_util, "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_FB_FREE": memory_mi - used, "DCGM_FI_DEV_GPU_TEMP": row.temp,
        "DCGM_FI_DEV_POWER_USAGE": round(row.power * POWER_SCALE, 3), "DCGM_FI_DEV_SM_CLOCK": row.sm_clock,
    }  # fmt: skip


def _mig_values(row: TraceRow, d: DeviceInfo, gpu_memory_mi: int) -> dict[str, float]:
    # DCGM has no per-instance GPU_UTIL; the whole GPU's busy share stands for the instance's
    # graphics-engine activity, and its framebuffer use is scaled to the instance's memory.
    return {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": row.util / 100.0, "DCGM_FI_DEV_FB_USED": round(row.fb_used * d.memory_mi / gpu_memory_mi)}


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6g}"


def _telemetry(b: ClusterBuilder, trace: Trace) -> tuple[str, str]:
    """``(exporter page, range-query answer)``: the history of every target over the hour
    before ``b.now`` at ``HISTORY_STEP_S`` steps, each step one real reading of the trace phase
    the target's plan puts there (phase readings in turn, offset per GPU), and the exporter's
    latest page, which is the last step. GPUs in MIG mode get whole-GPU power, temperature
    and framebuffer history (the node chart's per-GPU power line), not in the page."""
    end = int(b.now.timestamp())
    steps = [end - HISTORY_S + i * HISTORY_STEP_S for i in range(HISTORY_S // HISTORY_STEP_S + 1)]
    result: list[dict[str, Any]] = []
    latest: dict[str, list[str]] = {k: [] for k in _HELP}
    gi_next: dict[str, int] = {}
    mig_parents: dict[str, tuple[DeviceInfo, list[_Target]]] = {}

    def model_memory(d: DeviceInfo) -> int:
        return GPU_MODELS["rtx-pro-6000" if d.product == RTX else "h200-nvl"].memory_mi

    def emit(labels: dict[str, str], series: list[dict[str, float]]) -> None:
        for fld in series[0]:
            result.append({"metric": {"__name__": fld, **labels}, "values": [[ts, _fmt(v[fld])] for ts, v in zip(steps, series, strict=True)]})

    for t in _targets(b):
        d = t.dev
        rows = _play(t.plan, steps, trace, d.minor * 7 + (int(d.placement) if d.placement >= 0 else 0))
        if d.type == "mig":
            gi_next[d.parent_uuid] = gi_next.get(d.parent_uuid, 0) + 1
            labels = _labels(d, t, (d.profile, gi_next[d.parent_uuid]))
            series = [_mig_values(r, d, model_memory(d)) for r in rows]
            mig_parents.setdefault(d.parent_uuid, (d, []))[1].append(t)
        else:
            labels = _labels(d, t)
            series = [_whole_values(r, model_memory(d)) for r in rows]
        emit(labels, series)
        text = "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
        for fld, v in series[-1].items():
            latest[fld].append(f"{fld}{text} {_fmt(v)}")
    for parent_uuid, (d, members) in sorted(mig_parents.items()):
        busy = [m for m in members if m.pod is not None]
        plan = busy[0].plan if busy else ((0, "idle"),)
        gpu = DeviceInfo(d.node, d.pool, f"gpu-{d.minor}", "gpu", parent_uuid, "", d.minor, d.product, "", -1,
                         model_memory(d), d.pci_bus_id, d.driver_version)  # fmt: skip
        rows = _play(plan, steps, trace, d.minor * 7)
        keep = ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")
        emit(_labels(gpu, None), [{k: v for k, v in _whole_values(r, gpu.memory_mi).items() if k in keep} for r in rows])
    page: list[str] = []
    for fld, lines in latest.items():
        if lines:
            page += [f"# HELP {fld} {_HELP[fld]}", f"# TYPE {fld} gauge", *lines]
    answer = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    return "\n".join(page) + "\n", json.dumps(answer, separators=(",", ":")) + "\n"


def write_demo(folder: str | Path, now: datetime) -> DemoSnapshot:
    """Write ``build_demo(now)`` into ``folder`` (created if needed) as ``cluster.json`` (a
    ``kind: List``), the ``*.prom`` scrape and the ``*.range.json`` history; files this function did not write are left alone."""
    snap = build_demo(now)
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    doc = {"apiVersion": "v1", "kind": "List", "items": snap.objects, "metadata": {"resourceVersion": ""}}
    (root / "cluster.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for fname, text in (snap.prom | snap.ranges).items():
        (root / fname).write_text(text, encoding="utf-8")
    return snap
