"""The benchmark's fleet: a GPU cluster as heavy as a real one (issue 12, "Benchmark").

Pure: no Django, no clock, no network; deterministic for a given ``seed`` and ``now``. Per node:

- one Node and its ``gpu.nvidia.com`` ResourceSlice: 8x H200 NVL, GPUs 0-3 whole and GPUs 4-7
  in MIG mode as 7x ``1g.18gb`` each: 4 + 28 = 32 devices (32,000 per 1,000 nodes);
- 8 ResourceClaims made from ResourceClaimTemplates, each with its GPU pod (mostly ``in_use``,
  some ``allocated``, ``pending`` or ``deleting``; a pending pod asks for eight whole GPUs,
  which no node has free);
- 20 pods without GPUs, with full metadata, spec and status: 10 of the node's DaemonSets
  (kube-proxy, CNI, node-exporter, log shipper, and the GPU Operator's operands) and 10 CPU pods
  of ReplicaSets;
- 3 Events (kubelet ``Pulled``/``Created``/``Started`` of a pod started in the last hour; a
  pending GPU pod's ``FailedScheduling`` takes one of the three when there is one).

Plus the cluster-wide objects: the three NVIDIA DeviceClasses, 12 ResourceClaimTemplates and
the 10 DaemonSets. Object shapes: ``devtools.fleet.ClusterBuilder`` (where its facts come from:
``demo/SOURCES.md``); pods without GPUs copy the fields of the real pod of the
``healthy-vks-real`` case (``tests/fixtures/cases``) and the DaemonSet pod fields the
DaemonSet controller sets (node affinity on ``metadata.name``, its tolerations,
``controller-revision-hash`` and ``pod-template-generation`` labels); the kubelet Event
messages are those of the dra-example-driver's recorded events. Image tags are illustrative.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .fleet import (
    FLEET_EPOCH,
    SMALLEST,
    ClusterBuilder,
    NodeSpec,
    _cond,
    _ts,
    all_smallest,
    service_account_mount,
    service_account_volume,
)

GPUS_PER_NODE = 8
MIG_GPUS = (4, 5, 6, 7)
CLAIMS_PER_NODE = 8
PLAIN_PODS_PER_NODE = 20
EVENTS_PER_NODE = 3
NAMESPACES = ("team-a", "team-b", "ml-platform", "research")
# Claim states, weighted: a busy cluster with a few of every other state.
_STATES = ("in_use",) * 12 + ("allocated", "pending", "deleting")


@dataclass(frozen=True)
class DaemonSetSpec:
    namespace: str
    name: str
    image: str
    cpu: str
    memory: str
    port: int = 0
    privileged: bool = False
    host_network: bool = False
    host_paths: tuple[tuple[str, str], ...] = ()


DAEMONSETS = (
    DaemonSetSpec("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.36.2", "100m", "64Mi", 10249,
                  privileged=True, host_network=True, host_paths=(("/run/xtables.lock", "xtables-lock"), ("/lib/modules", "lib-modules"))),
    DaemonSetSpec("kube-system", "calico-node", "quay.io/calico/node:v3.30.3", "250m", "256Mi", 9091,
                  privileged=True, host_network=True, host_paths=(("/var/run/calico", "var-run-calico"), ("/etc/cni/net.d", "cni-net-dir"))),
    DaemonSetSpec("monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.9.1", "100m", "128Mi", 9100,
                  host_network=True, host_paths=(("/proc", "proc"), ("/sys", "sys"))),
    DaemonSetSpec("logging", "fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:4.0.7", "100m", "128Mi", 2020,
                  host_paths=(("/var/log", "varlog"),)),
    DaemonSetSpec("gpu-operator", "gpu-feature-discovery", "nvcr.io/nvidia/k8s-device-plugin:v0.18.0", "50m", "64Mi",
                  host_paths=(("/etc/kubernetes/node-feature-discovery/features.d", "output-dir"),)),
    DaemonSetSpec("gpu-operator", "nvidia-container-toolkit-daemonset", "nvcr.io/nvidia/k8s/container-toolkit:v1.18.0", "50m", "64Mi",
                  privileged=True, host_paths=(("/usr/local/nvidia", "toolkit-install-dir"), ("/run/nvidia", "run-nvidia"))),
    DaemonSetSpec("gpu-operator", "nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.1-4.8.0-distroless", "100m", "512Mi", 9400,
                  privileged=True, host_paths=(("/var/lib/kubelet/pod-resources", "pod-gpu-resources"),)),
    DaemonSetSpec("gpu-operator", "nvidia-dra-driver-gpu-kubelet-plugin", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.1",
                  "100m", "128Mi", privileged=True,
                  host_paths=(("/var/lib/kubelet/plugins_registry", "plugins-registry"), ("/var/lib/kubelet/plugins", "plugins"))),
    DaemonSetSpec("gpu-operator", "nvidia-mig-manager", "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.3", "50m", "64Mi",
                  privileged=True, host_paths=(("/sys", "host-sys"),)),
    DaemonSetSpec("gpu-operator", "nvidia-operator-validator", "nvcr.io/nvidia/gpu-operator:v25.10.0", "10m", "32Mi",
                  privileged=True, host_paths=(("/run/nvidia/validations", "run-nvidia-validations"),)),
)  # fmt: skip

# CPU services beside the GPU work (ReplicaSet pods that tolerate the GPU taint), per namespace.
CPU_APPS = (
    ("team-a", "tokenizer-svc", "ghcr.io/huggingface/text-embeddings-inference:cpu-1.8", 8080),
    ("team-a", "request-router", "docker.io/envoyproxy/envoy:v1.35.3", 9901),
    ("team-b", "feature-store", "docker.io/feastdev/feature-server:0.53.0", 6566),
    ("team-b", "batch-loader", "docker.io/library/python:3.12-slim", 8000),
    ("ml-platform", "ray-head-proxy", "docker.io/rayproject/ray:2.49.2-py312-cpu", 8265),
    ("ml-platform", "metrics-sidecar", "quay.io/prometheus/pushgateway:v1.11.1", 9091),
    ("ml-platform", "dataset-cache", "docker.io/library/redis:8.2-alpine", 6379),
    ("research", "notebook-proxy", "quay.io/jupyterhub/configurable-http-proxy:4.6.3", 8000),
    ("research", "eval-reporter", "docker.io/library/python:3.12-slim", 8000),
    ("research", "artifact-sync", "docker.io/amazon/aws-cli:2.31.0", 0),
)
_DS_TOLERATIONS = (
    {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
)
_HOST_NETWORK_TOLERATION = {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable", "operator": "Exists"}


def _node_spec(i: int, rng: random.Random) -> NodeSpec:
    layout = all_smallest("h200-nvl")  # 7x 1g.18gb
    return NodeSpec(
        name=f"h200-nvl-{i:05d}", model="h200-nvl", gpus=GPUS_PER_NODE, pool="h200-nvl-8x",
        mig=dict.fromkeys(MIG_GPUS, layout), mig_config=f"custom-4-of-8-{SMALLEST['h200-nvl']}",
        driver="580.159.04", age=timedelta(days=rng.randint(3, 200), minutes=rng.randint(0, 1439)),
    )


def _daemonset(b: ClusterBuilder, ds: DaemonSetSpec, nodes: int) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": ds.name}
    return b.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "annotations": {"deprecated.daemonset.template.generation": "3"},
                "creationTimestamp": _ts(b.ago(days=210)),
                "generation": 3,
                "labels": dict(labels),
                "name": ds.name,
                "namespace": ds.namespace,
                "resourceVersion": b.rv(),
                "uid": b.uid("DaemonSet", ds.namespace, ds.name),
            },
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": dict(labels)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": _ds_pod_spec(ds, "", "kube-api-access")},
                "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
            },
            "status": {
                "currentNumberScheduled": nodes, "desiredNumberScheduled": nodes, "numberAvailable": nodes,
                "numberMisscheduled": 0, "numberReady": nodes, "observedGeneration": 3, "updatedNumberScheduled": nodes,
            },
        }
    )  # fmt: skip


def _container(name: str, image: str, cpu: str, memory: str, port: int, vol: str, *, privileged: bool,
               host_paths: Sequence[tuple[str, str]] = (), probe: bool = True) -> dict[str, Any]:
    c: dict[str, Any] = {
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
        ],
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": {"limits": {"memory": memory}, "requests": {"cpu": cpu, "memory": memory}},
        "securityContext": {"privileged": True} if privileged else {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True,
            "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"},
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [*({"mountPath": path, "name": vname} for path, vname in host_paths), service_account_mount(vol)],
    }  # fmt: skip
    if port:
        c["ports"] = [{"containerPort": port, "name": "metrics" if port != 8080 else "http", "protocol": "TCP"}]
        if probe:
            check = {"failureThreshold": 3, "httpGet": {"path": "/healthz" if port != 9400 else "/health", "port": port, "scheme": "HTTP"},
                     "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1}
            c["livenessProbe"] = {**check, "initialDelaySeconds": 15}
            c["readinessProbe"] = dict(check)
    return c


def _ds_pod_spec(ds: DaemonSetSpec, node: str, vol: str) -> dict[str, Any]:
    tolerations = [dict(t) for t in _DS_TOLERATIONS]
    if ds.host_network:
        tolerations.append(dict(_HOST_NETWORK_TOLERATION))
    spec: dict[str, Any] = {
        "containers": [_container(ds.name, ds.image, ds.cpu, ds.memory, ds.port, vol, privileged=ds.privileged, host_paths=ds.host_paths)],
        "dnsPolicy": "ClusterFirstWithHostNet" if ds.host_network else "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 2000001000,
        "priorityClassName": "system-node-critical",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": ds.name,
        "serviceAccountName": ds.name,
        "terminationGracePeriodSeconds": 30,
        "tolerations": tolerations,
        "volumes": [*({"hostPath": {"path": path, "type": ""}, "name": vname} for path, vname in ds.host_paths), service_account_volume(vol)],
    }
    if ds.host_network:
        spec["hostNetwork"] = True
    if node:
        # What the DaemonSet controller sets on each of its pods.
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        spec["nodeName"] = node
    return spec


def _running_status(b: ClusterBuilder, namespace: str, name: str, node: str, containers: Sequence[dict[str, Any]],
                    created: datetime, qos: str, pod_ip: str, restarts: int = 0) -> dict[str, Any]:
    started = created + timedelta(seconds=b.rng.randint(3, 40))
    host_ip = b.nodes[node]["status"]["addresses"][0]["address"]
    statuses = []
    for c in containers:
        image = c["image"]
        statuses.append({
            "containerID": b.container_id(namespace, name, c["name"]),
            "image": image,
            "imageID": image.split(":", 1)[0] + "@sha256:" + (b.uid("img", "", image) * 2).replace("-", "")[:64],
            "lastState": {},
            "name": c["name"],
            "ready": True,
            "restartCount": restarts,
            "started": True,
            "state": {"running": {"startedAt": _ts(started)}},
            "volumeMounts": [{**m, "recursiveReadOnly": "Disabled"} if m.get("readOnly") else dict(m) for m in c["volumeMounts"]],
        })
    return {
        "conditions": [
            _cond("PodReadyToStartContainers", started), _cond("Initialized", created), _cond("Ready", started),
            _cond("ContainersReady", started), _cond("PodScheduled", created),
        ],
        "containerStatuses": statuses,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "observedGeneration": 1,
        "phase": "Running",
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "qosClass": qos,
        "startTime": _ts(created + timedelta(seconds=1)),
    }  # fmt: skip


def _ds_pod(b: ClusterBuilder, ds: DaemonSetSpec, owner: dict[str, Any], node: str, created: datetime) -> dict[str, Any]:
    name = b.pod_name(ds.namespace, ds.name)
    vol = f"kube-api-access-{b.suffix()}"
    spec = _ds_pod_spec(ds, node, vol)
    meta = owner["metadata"]
    host_ip = b.nodes[node]["status"]["addresses"][0]["address"]
    pod_ip = host_ip if ds.host_network else f"10.244.{b.rng.randint(1, 250)}.{b.rng.randint(2, 250)}"
    return b.add({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": _ts(created),
            "generateName": f"{ds.name}-",
            "generation": 1,
            "labels": {
                "app.kubernetes.io/name": ds.name,
                "controller-revision-hash": b.uid("rev", ds.namespace, ds.name).replace("-", "")[:10],
                "pod-template-generation": "3",
            },
            "name": name,
            "namespace": ds.namespace,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "DaemonSet", "name": meta["name"], "uid": meta["uid"]}],
            "resourceVersion": b.rv(),
            "uid": b.uid("Pod", ds.namespace, name),
        },
        "spec": spec,
        "status": _running_status(b, ds.namespace, name, node, spec["containers"], created, "Burstable", pod_ip),
    })  # fmt: skip


def _cpu_pod(b: ClusterBuilder, app: tuple[str, str, str, int], node: str, created: datetime) -> dict[str, Any]:
    ns, name_, image, port = app
    rs_hash = b.uid("rs", ns, name_).replace("-", "")[:9]
    rs = f"{name_}-{rs_hash}"
    name = b.pod_name(ns, rs)
    vol = f"kube-api-access-{b.suffix()}"
    container = _container("main", image, "500m", "1Gi", port, vol, privileged=False)
    if port:
        container["args"] = ["--port", str(port)]
    spec: dict[str, Any] = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "nodeName": node,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ],
        "volumes": [service_account_volume(vol)],
    }
    pod_ip = f"10.244.{b.rng.randint(1, 250)}.{b.rng.randint(2, 250)}"
    return b.add({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": _ts(created),
            "generateName": f"{rs}-",
            "generation": 1,
            "labels": {"app": name_, "pod-template-hash": rs_hash},
            "name": name,
            "namespace": ns,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "ReplicaSet", "name": rs, "uid": b.uid("ReplicaSet", ns, rs)}],
            "resourceVersion": b.rv(),
            "uid": b.uid("Pod", ns, name),
        },
        "spec": spec,
        "status": _running_status(b, ns, name, node, [container], created, "Burstable", pod_ip),
    })  # fmt: skip


def generate_benchmark_fleet(nodes: int, seed: int = 0, now: datetime | None = None) -> list[dict[str, Any]]:
    """The benchmark fleet of ``nodes`` nodes (module docstring): raw v1 objects in creation order.

    Per node 1 Node, 1 ResourceSlice (32 devices), 8 ResourceClaims and their 8 pods, 20 other
    pods and 3 Events; every claim state is present once ``nodes >= 1``. ``now`` (default
    ``FLEET_EPOCH``) is the snapshot moment: no timestamp is later. Raises ``ValueError`` for
    ``nodes < 1``.
    """
    if nodes < 1:
        raise ValueError("a fleet needs at least one node")
    now = now or FLEET_EPOCH
    b = ClusterBuilder(seed, now)
    rng = random.Random(seed * 7919 + 3)  # noqa: S311 - reproducible test data
    b.device_classes()
    daemonsets = [(ds, _daemonset(b, ds, nodes)) for ds in DAEMONSETS]
    specs = [_node_spec(i, rng) for i in range(nodes)]
    for spec in specs:
        b.node(spec)
    templates = {}
    for ns in NAMESPACES:
        templates[(ns, "gpu")] = b.template(ns, "single-gpu")
        templates[(ns, "gpu-x8")] = b.template(ns, "eight-gpus", request="gpus", count=8)
        templates[(ns, "mig")] = b.template(
            ns, "mig-1g18gb", request="mig", device_class="mig.nvidia.com",
            selectors=["device.attributes['gpu.nvidia.com'].profile == '1g.18gb'"],
        )
    n = 0
    for spec in specs:
        pending: list[dict[str, Any]] = []
        free = b.free_devices(node=spec.name)
        rng.shuffle(free)
        for _ in range(CLAIMS_PER_NODE):
            # The first four claims cover every state; the rest follow the weighted mix.
            state = ("in_use", "allocated", "pending", "deleting")[n] if n < 4 else rng.choice(_STATES)
            n += 1
            ns = NAMESPACES[rng.randrange(len(NAMESPACES))]
            if state == "pending":
                pod, _claim = b.workload(ns, f"trainer-{rng.randrange(1000):03d}", state=state, template=templates[(ns, "gpu-x8")],
                                         age=timedelta(minutes=rng.randint(3, 50)), owner_kind="Job",
                                         image="nvcr.io/nvidia/pytorch:25.10-py3", events=False)
                pending.append(pod)
                continue
            dev = free.pop()
            kw: dict[str, Any] = {"age": timedelta(minutes=rng.randint(3, 60 * 24 * 6))}
            if state == "allocated":
                kw["age"] = timedelta(seconds=rng.randint(5, 90))
            if state == "deleting":
                kw["deleting_age"] = timedelta(seconds=rng.randint(2, 40))
            app = f"{'notebook' if dev.type == 'mig' else 'llm-serve'}-{rng.randrange(1000):03d}"
            b.workload(ns, app, state=state, template=templates[(ns, "mig" if dev.type == "mig" else "gpu")],
                       devices=[dev], events=False, **kw)
        joined = now - spec.age
        for ds, owner in daemonsets:
            _ds_pod(b, ds, owner, spec.name, joined + timedelta(minutes=rng.randint(1, 9)))
        recent = None
        for k, app in enumerate(CPU_APPS):
            # The last one was restarted within the hour: its kubelet Events are still kept.
            age = timedelta(minutes=rng.randint(5, 50)) if k == len(CPU_APPS) - 1 else timedelta(hours=rng.randint(2, 24 * 30))
            recent = _cpu_pod(b, app, spec.name, max(now - age, joined + timedelta(minutes=10)))
        assert recent is not None
        _node_events(b, spec.name, recent, pending[:1])
    return b.objects


def _node_events(b: ClusterBuilder, node: str, pod: dict[str, Any], pending: Sequence[dict[str, Any]]) -> None:
    """``EVENTS_PER_NODE`` Events: a pending pod's FailedScheduling first (if any), then the
    kubelet's events about ``pod``, which started on ``node`` in the last hour."""
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    left = EVENTS_PER_NODE
    for p in pending:
        b.scheduler_event(p, _unschedulable(len(b.nodes)), first=datetime.fromisoformat(
            p["metadata"]["creationTimestamp"].replace("Z", "+00:00")) + timedelta(seconds=1))
        left -= 1
    image = pod["spec"]["containers"][0]["image"]
    kubelet = (
        ("Pulled", f'Container image "{image}" already present on machine', 2),
        ("Created", "Container created", 3),
        ("Started", "Container started", 4),
    )
    for reason, message, after in kubelet[-left:] if left else ():
        b.core_event(pod, reason, message, component="kubelet", host=node, first=min(created + timedelta(seconds=after), b.now),
                     field_path="spec.containers{main}")


def _unschedulable(nodes: int) -> str:
    return (f"0/{nodes} nodes are available: {nodes} cannot allocate all claims. still not schedulable, "
            f"preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling.")


def change_one_claim(objects: Sequence[dict[str, Any]], now: datetime | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A copy of ``objects`` in which one in-use claim has been deleting for 47 minutes, held by
    its delete-protection finalizer while still reserved (a stuck deallocation: the diagnosis
    must find it).

    Only that claim is a new object (new, higher ``resourceVersion``); every other object is
    shared with ``objects``. Returns (objects, the changed claim). Raises ``ValueError`` when no
    claim is in use.
    """
    import copy

    now = now or FLEET_EPOCH
    top = max((int(rv) for o in objects if (rv := (o.get("metadata") or {}).get("resourceVersion", "")).isdigit()), default=0)
    out = list(objects)
    for i, o in enumerate(out):
        if o.get("kind") != "ResourceClaim" or o["metadata"].get("deletionTimestamp"):
            continue
        status = o.get("status") or {}
        if not (status.get("allocation") and status.get("reservedFor")):
            continue
        claim = copy.deepcopy(o)
        claim["metadata"]["deletionTimestamp"] = _ts(now - timedelta(minutes=47))
        claim["metadata"]["deletionGracePeriodSeconds"] = 0
        claim["metadata"]["resourceVersion"] = str(top + 1)
        out[i] = claim
        return out, claim
    raise ValueError("no claim in use to change")
