"""The production-readiness checklist of docs/domain.md, evaluated from cluster objects.

Pure: no Django; ``now`` is passed in. ``evaluate_readiness(objects, now, attestations,
prometheus_rules, dcgm_devices_with_metrics)`` returns a ``Readiness`` with one ``ItemResult`` per checklist item (stable
ids below), each ``pass`` / ``fail`` / ``unknown`` / ``attested`` with evidence lines and a
next step.

Status rules: an item the cluster shows as met is ``pass`` and shown as broken is ``fail``;
an attestation never overrides ``fail``. What the cluster cannot show (pinning in git, the
change commit, a node-replacement runbook) is ``unknown`` until a valid attestation makes it
``attested``. An attestation counts when ``at <= now < expires_at`` (no expiry: always).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inventory.normalize import UnknownAPIVersion, normalize
from inventory.parse import parse_resource_slice
from migration.workloads import ObjectRef, containers, controller_owner, dig, is_gpu_resource, pod_spec

PASS, FAIL, UNKNOWN, ATTESTED = "pass", "fail", "unknown", "attested"

ITEMS: tuple[tuple[str, str], ...] = (
    ("allocation_path", "One allocation path: ClusterPolicy or GPUCluster"),
    ("operator_pinned", "Operator chart and images pinned, never latest"),
    ("gpu_nodes_tainted", "GPU nodes tainted; ordinary workloads kept off them"),
    ("mig_geometry_declared", "MIG geometry declared by node label and ConfigMap"),
    ("gpu_node_pool", "Separate GPU node pool"),
    ("dcgm_alerts", "DCGM exporter and alerts on temperature, XID errors, utilization"),
    ("queueing", "Queueing layer (Kueue or a batch scheduler) configured"),
    ("evidence", "Evidence: driver version, MIG profile, change commit, node-replacement runbook"),
)
TITLES = dict(ITEMS)

# Labels cloud providers and autoscalers put on nodes of one pool, most specific first.
POOL_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "vks.vmware.com/nodepool",
    "node.kubernetes.io/instance-type",
)
DCGM_ALERT_FIELDS = {
    "temperature": "DCGM_FI_DEV_GPU_TEMP",
    "XID errors": "DCGM_FI_DEV_XID_ERRORS",
    "utilization": "DCGM_FI_DEV_GPU_UTIL",
}
DRIVER_LABEL = "nvidia.com/cuda.driver-version.full"
_FIELD_TOKEN = re.compile(r"DCGM_FI_[A-Z0-9_]+")


@dataclass(frozen=True)
class Attestation:
    """A person's statement that an item is met, for what the cluster cannot show.

    ``item_id``: a checklist id. ``by``: who. ``at``/``expires_at``: aware datetimes
    (``expires_at`` None: no expiry). ``evidence_url``: where the proof lives (commit, runbook).
    """

    item_id: str
    by: str
    at: datetime
    evidence_url: str
    expires_at: datetime | None = None

    def valid_at(self, now: datetime) -> bool:
        return self.at <= now and (self.expires_at is None or now < self.expires_at)


@dataclass(frozen=True)
class ItemResult:
    id: str
    title: str
    status: str
    evidence: tuple[str, ...]
    next_step: str
    attestation: Attestation | None = None


@dataclass(frozen=True)
class Readiness:
    """``score``: 0-100, share of items passed or attested. ``stage``: ``production`` when
    items 3-8 are met, ``proof of concept`` when only item 1 is, else ``not started``."""

    items: tuple[ItemResult, ...]
    passed: int
    total: int
    score: int
    stage: str

    def item(self, item_id: str) -> ItemResult:
        return next(i for i in self.items if i.id == item_id)


@dataclass(frozen=True)
class _Auto:
    status: str
    evidence: tuple[str, ...]
    next_step: str


def _kind(objects: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") in kinds]


def _labels(o: dict[str, Any]) -> dict[str, Any]:
    return dig(o, "metadata", "labels") or {}


def _name(o: dict[str, Any]) -> str:
    return str(dig(o, "metadata", "name") or "")


def _is_gpu_node(n: dict[str, Any], slice_nodes: set[str]) -> bool:
    labels = _labels(n)
    alloc = dig(n, "status", "allocatable") or {}
    return (
        labels.get("nvidia.com/gpu.present") == "true"
        or any(is_gpu_resource(k) and str(v) not in ("0", "") for k, v in alloc.items())
        or _name(n) in slice_nodes
    )


# Every kind ``evaluate_readiness`` reads; a caller holding a large cluster may pass only these.
READINESS_KINDS = frozenset({
    "Node", "Pod", "DaemonSet", "Deployment", "ConfigMap", "PrometheusRule", "ClusterPolicy", "GPUCluster",
    "NVIDIADriver", "ClusterQueue", "ResourceFlavor", "Queue", "ResourceSlice",
})  # fmt: skip


def slim_slice(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of a ResourceSlice the checklist reads (``_gpu_slices``): kind, version, name,
    ``spec.driver``, ``spec.pool``, ``spec.nodeName`` and each device's name and
    ``driverVersion`` attribute. A 1,000-node fleet's slices are mostly device attributes the
    checklist never looks at; callers streaming stored slices keep only this. Older served
    versions are normalized to v1 first (v1beta1 devices hold attributes under ``basic``)."""
    try:
        obj = normalize(obj)
    except UnknownAPIVersion:
        return obj  # ``_gpu_slices`` skips it, as it would the full object
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    devices = []
    for d in spec.get("devices") or []:
        if not isinstance(d, dict):
            continue
        attrs = d.get("attributes") if isinstance(d.get("attributes"), dict) else {}
        keep = {k: v for k, v in attrs.items() if k.rpartition("/")[2] == "driverVersion"}
        devices.append({"name": d.get("name"), "attributes": keep})
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in ("name", "uid") if k in meta},
        "spec": {**{k: spec[k] for k in ("driver", "pool", "nodeName", "allNodes") if k in spec}, "devices": devices},
    }


def slim_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of a Pod the checklist reads: name, namespace, uid, labels, ownerReferences,
    ``spec.nodeName``, ``spec.resourceClaims``, each container's name, image and resources,
    and ``status.phase``. A pod's volumes, env, probes and statuses are most of its size."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    out_spec: dict[str, Any] = {k: spec[k] for k in ("nodeName", "resourceClaims") if k in spec}
    for key in ("initContainers", "containers"):
        if isinstance(spec.get(key), list):
            out_spec[key] = [
                {k: c[k] for k in ("name", "image", "resources") if k in c} if isinstance(c, dict) else c
                for c in spec[key]
            ]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "labels", "ownerReferences") if k in meta},
        "spec": out_spec,
        "status": {k: status[k] for k in ("phase",) if k in status},
    }


def slim_object(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` cut to what ``evaluate_readiness`` reads (ResourceSlices and Pods, the bulk of a
    large cluster; other kinds as they are): the result is the same, the memory a fraction."""
    kind = obj.get("kind")
    if kind == "ResourceSlice":
        return slim_slice(obj)
    if kind == "Pod":
        return slim_pod(obj)
    return obj


def _gpu_slices(objects: list[dict[str, Any]]) -> list[Any]:
    out = []
    for s in _kind(objects, "ResourceSlice"):
        try:
            sl = parse_resource_slice(normalize(s))
        except (ValueError, UnknownAPIVersion):
            continue
        if sl.driver == "gpu.nvidia.com":
            out.append(sl)
    return out


def _pod_uses_gpu(pod: dict[str, Any]) -> bool:
    spec = pod_spec(pod) or {}
    if spec.get("resourceClaims"):
        return True
    for c, _ in containers(spec):
        res = c.get("resources") or {}
        names = list(res.get("limits") or {}) + list(res.get("requests") or {})
        if any(is_gpu_resource(n) or n.startswith("deviceclass.resource.kubernetes.io/") for n in names):
            return True
    return False


# --- items -------------------------------------------------------------------------------------


def _allocation_path(objects: list[dict[str, Any]], slices: list[Any]) -> _Auto:
    cps = [str(ObjectRef.of(o)) for o in _kind(objects, "ClusterPolicy")]
    gcs = [str(ObjectRef.of(o)) for o in _kind(objects, "GPUCluster")]
    if cps and gcs:
        return _Auto(FAIL, tuple(cps + gcs), "Remove one: a cluster runs the device plugin (ClusterPolicy) or DRA (GPUCluster), never both.")
    if cps or gcs:
        return _Auto(PASS, tuple(cps + gcs), "Document which path this cluster uses.")
    plugins = [str(ObjectRef.of(d)) for d in _kind(objects, "DaemonSet") if "device-plugin" in _name(d)]
    dra = [str(ObjectRef.of(d)) for d in _kind(objects, "DaemonSet") if "dra-driver" in _name(d) and "kubelet" in _name(d)]
    # What the nodes show: allocatable nvidia.com/* (device plugin) vs gpu.nvidia.com slices (DRA).
    plugin_nodes = {
        _name(n) for n in _kind(objects, "Node")
        if any(is_gpu_resource(k) and str(v) not in ("0", "") for k, v in (dig(n, "status", "allocatable") or {}).items())
    }
    dra_nodes = {d.node_name for sl in slices for d in sl.devices if d.node_name}
    both = sorted(plugin_nodes & dra_nodes)
    if both:
        return _Auto(FAIL, tuple(f"Node {n} advertises nvidia.com/* and publishes gpu.nvidia.com ResourceSlices" for n in both),
                     "Device plugin and DRA driver must not serve the same GPUs: keep one.")
    if plugins and dra:
        return _Auto(FAIL, tuple(plugins + dra), "Device plugin and DRA driver must not serve the same GPUs: keep one.")
    if plugins or dra or plugin_nodes or dra_nodes:
        lines = plugins + dra
        if dra_nodes:
            lines.append(f"gpu.nvidia.com ResourceSlices on {len(dra_nodes)} node(s): DRA")
        if plugin_nodes:
            lines.append(f"nvidia.com/* allocatable on {len(plugin_nodes)} node(s): device plugin")
        if dra_nodes and plugin_nodes:
            return _Auto(FAIL, tuple(lines), "Run one allocation path per cluster, documented.")
        return _Auto(PASS, tuple(lines), "Document which path this cluster uses (no operator CR in the snapshot).")
    return _Auto(UNKNOWN, ("no ClusterPolicy, GPUCluster, device plugin or DRA driver DaemonSet in the snapshot",),
                 "Install GPU Operator with a GPUCluster (DRA) or a ClusterPolicy, or attest the path in use.")


def _tag(image: str) -> str | None:
    """Tag of an image reference, "@digest" for digests, None when untagged (means latest)."""
    if "@" in image:
        return "@" + image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _spec_images(spec: Any, path: str = "spec") -> Iterable[tuple[str, str | None]]:
    """(where, tag) for every component block of an operator CR that names an image or
    version (``repository``/``image``/``version`` as GPU Operator CRs spell them)."""
    if isinstance(spec, dict):
        if "image" in spec or "version" in spec:
            version = spec.get("version")
            image = spec.get("image")
            if isinstance(version, str | int | float) and str(version):
                yield path, str(version)
            elif isinstance(image, str) and image:
                yield path, _tag(image)
        for k, v in spec.items():
            if isinstance(v, dict | list):
                yield from _spec_images(v, f"{path}.{k}")
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            yield from _spec_images(v, f"{path}[{i}]")


def _operator_pinned(objects: list[dict[str, Any]]) -> _Auto:
    checked: list[str] = []
    bad: list[str] = []
    for o in _kind(objects, "ClusterPolicy", "GPUCluster", "NVIDIADriver"):
        for where, tag in _spec_images(o.get("spec")):
            line = f"{ObjectRef.of(o)} {where}: {tag or 'no tag'}"
            checked.append(line)
            if tag is None or tag == "latest":
                bad.append(line)
    charts: list[str] = []
    for d in _kind(objects, "Deployment"):
        labels = _labels(d)
        if _name(d) != "gpu-operator" and labels.get("app.kubernetes.io/name") != "gpu-operator":
            continue
        chart = labels.get("helm.sh/chart")
        if chart:
            charts.append(f"{ObjectRef.of(d)} chart {chart}")
            if str(chart).endswith("-latest"):
                bad.append(f"{ObjectRef.of(d)} chart {chart}")
        for c, _ in containers(dig(d, "spec", "template", "spec") or {}):
            tag = _tag(str(c.get("image", "")))
            line = f"{ObjectRef.of(d)} image {c.get('image')}"
            checked.append(line)
            if tag is None or tag == "latest":
                bad.append(line)
    if bad:
        return _Auto(FAIL, tuple(f"not pinned: {b}" for b in bad),
                     "Pin every operator image and the chart to a version in git (e.g. gpu-operator v26.7.2).")
    if not checked and not charts:
        return _Auto(UNKNOWN, ("no operator CRs or gpu-operator Deployment in the snapshot",),
                     "Snapshot the gpu-operator namespace and the operator CRs, or attest the pinned versions.")
    return _Auto(PASS, tuple(charts + checked) or ("operator CRs name no images (operator defaults)",),
                 "Keep the versions in git; review them at each upgrade.")


# Taint key prefixes Kubernetes itself manages: the node lifecycle controller's cordon
# (``node.kubernetes.io/unschedulable`` mirrors ``spec.unschedulable``), condition taints
# (not-ready, unreachable, memory/disk/pid-pressure, network-unavailable, out-of-service) and the
# cloud controller's ``uninitialized``/``shutdown``. They come and go with the node's state, so
# none keeps ordinary workloads off a GPU node once the node is uncordoned or recovers.
KUBERNETES_MANAGED_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")


def _taint_text(t: dict[str, Any]) -> str:
    return f"{t.get('key')}:{t.get('effect')}"


def _gpu_nodes_tainted(objects: list[dict[str, Any]], gpu_nodes: list[dict[str, Any]]) -> _Auto:
    """Pass when every GPU node carries a dedicated NoSchedule/NoExecute taint (``spec.taints``,
    key outside ``KUBERNETES_MANAGED_TAINT_PREFIXES``) and no ordinary pod (no GPU request, not a
    DaemonSet or static pod) runs on one. Evidence names each GPU node lacking a dedicated taint
    and any Kubernetes-managed taint it has instead."""
    if not gpu_nodes:
        return _Auto(UNKNOWN, ("no GPU nodes in the snapshot",), "Snapshot the Nodes.")
    evidence: list[str] = []
    untainted: list[str] = []
    for n in gpu_nodes:
        raw = dig(n, "spec", "taints")
        taints = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
        keeping = [t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute")]
        dedicated = [t for t in keeping if not str(t.get("key") or "").startswith(KUBERNETES_MANAGED_TAINT_PREFIXES)]
        managed = [t for t in keeping if t not in dedicated]
        if dedicated:
            evidence.append(f"Node {_name(n)} tainted {', '.join(_taint_text(t) for t in dedicated)}")
        elif managed:
            untainted.append(f"Node {_name(n)} has no dedicated NoSchedule/NoExecute taint (only "
                             f"{', '.join(_taint_text(t) for t in managed)}, which Kubernetes manages and removes)")
        else:
            untainted.append(f"Node {_name(n)} has no dedicated NoSchedule/NoExecute taint")
    names = {_name(n) for n in gpu_nodes}
    ordinary = []
    for p in _kind(objects, "Pod"):
        node = dig(p, "spec", "nodeName")
        if node not in names or dig(p, "status", "phase") in ("Succeeded", "Failed"):
            continue
        owner = controller_owner(p)
        if owner is not None and owner.get("kind") in ("DaemonSet", "Node"):
            continue  # per-node agents and static pods belong on every node
        if not _pod_uses_gpu(p):
            ordinary.append(f"{ObjectRef.of(p)} on {node}")
    if untainted or ordinary:
        lines = untainted + [f"ordinary pod without GPU request: {o}" for o in ordinary]
        return _Auto(FAIL, tuple(lines), "Taint GPU nodes (e.g. nvidia.com/gpu=present:NoSchedule) and give only GPU workloads the toleration.")
    return _Auto(PASS, tuple(evidence), "Keep the taint in the node pool definition.")


def _mig_configs_declared(objects: list[dict[str, Any]]) -> set[str] | None:
    """Names under ``mig-configs`` in any mig-parted ConfigMap; None when there is none."""
    import yaml  # local: only this check parses ConfigMap payloads

    found: set[str] | None = None
    for cm in _kind(objects, "ConfigMap"):
        for text in (cm.get("data") or {}).values():
            if not isinstance(text, str) or "mig-configs" not in text:
                continue
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("mig-configs"), dict):
                found = (found or set()) | {str(k) for k in doc["mig-configs"]}
    return found


def _mig_geometry(objects: list[dict[str, Any]], gpu_nodes: list[dict[str, Any]], slice_nodes: set[str]) -> _Auto:
    """MIG labels live on Node objects (GPU feature discovery): without Node objects, or with
    GPU nodes known only from their ResourceSlices, "no MIG-capable node" cannot be shown."""
    capable = [n for n in gpu_nodes if _labels(n).get("nvidia.com/mig.capable") == "true" or _labels(n).get("nvidia.com/mig.config")]
    if not capable:
        node_names = {_name(n) for n in _kind(objects, "Node")}
        if not node_names:
            return _Auto(UNKNOWN, ("no Node objects read; cannot see MIG labels",),
                         "Snapshot the Nodes (with their nvidia.com/mig.* labels).")
        unseen = sorted(slice_nodes - node_names)
        if unseen:
            return _Auto(UNKNOWN, (f"{len(unseen)} GPU node(s) known only from ResourceSlices, no Node object: "
                                   f"cannot see their MIG labels ({', '.join(unseen[:5])}{', ...' if len(unseen) > 5 else ''})",),
                         "Snapshot the Nodes (with their nvidia.com/mig.* labels).")
        return _Auto(PASS, ("no MIG-capable GPU nodes",), "Nothing to declare.")
    declared = _mig_configs_declared(objects)
    lines: list[str] = []
    bad: list[str] = []
    for n in capable:
        labels = _labels(n)
        config = labels.get("nvidia.com/mig.config")
        state = labels.get("nvidia.com/mig.config.state", "")
        if not config:
            bad.append(f"Node {_name(n)} is MIG-capable but has no nvidia.com/mig.config label")
        elif state in ("pending", "failed"):
            bad.append(f"Node {_name(n)} mig.config={config} stuck in state {state}")
        elif declared is not None and config not in declared:
            bad.append(f"Node {_name(n)} mig.config={config} is not defined in any mig-parted ConfigMap")
        else:
            lines.append(f"Node {_name(n)} mig.config={config} state={state or 'unset'}")
    if declared is None:
        lines.append("no mig-parted ConfigMap in the snapshot to check the names against")
    if bad:
        return _Auto(FAIL, tuple(bad + lines), "Set nvidia.com/mig.config from the node pool definition in git and fix failed layouts.")
    return _Auto(PASS, tuple(lines), "Keep the label in the node pool definition and the ConfigMap in git.")


def _gpu_node_pool(objects: list[dict[str, Any]], gpu_nodes: list[dict[str, Any]]) -> _Auto:
    if not gpu_nodes:
        return _Auto(UNKNOWN, ("no GPU nodes in the snapshot",), "Snapshot the Nodes.")
    gpu_names = {_name(n) for n in gpu_nodes}
    cpu_nodes = [n for n in _kind(objects, "Node") if _name(n) not in gpu_names]
    for key in POOL_LABELS:
        gpu_vals = {_labels(n).get(key) for n in gpu_nodes}
        if None in gpu_vals:
            continue
        cpu_vals = {_labels(n).get(key) for n in cpu_nodes} - {None}
        shared = gpu_vals & cpu_vals
        if shared:
            return _Auto(FAIL, (f"{key}={', '.join(sorted(map(str, shared)))} holds both GPU and CPU nodes",),
                         "Put GPU nodes in their own node pool so they scale and drain apart from CPU nodes.")
        extra = "" if cpu_nodes else " (no CPU nodes in the snapshot to compare)"
        return _Auto(PASS, (f"GPU nodes in {key}={', '.join(sorted(map(str, gpu_vals)))}{extra}",),
                     "Let the autoscaler consolidate the GPU pool by load.")
    return _Auto(FAIL, ("GPU nodes carry no node pool label (" + ", ".join(POOL_LABELS) + ")",),
                 "Create a separate GPU node pool (node group, GKE node pool, Karpenter NodePool).")


def _dcgm_alerts(objects: list[dict[str, Any]], prometheus_rules: list[Any] | None,
                 dcgm_devices_with_metrics: int | None = None) -> _Auto:
    lines: list[str] = []
    running = False
    if dcgm_devices_with_metrics:
        # DCGM samples attributed to devices of this cluster: an exporter runs and is scraped,
        # even when its DaemonSet/pods were not read (another namespace, no RBAC).
        running = True
        lines.append(f"DCGM samples stored for {dcgm_devices_with_metrics} device(s)")
    for d in _kind(objects, "DaemonSet"):
        if "dcgm-exporter" in _name(d):
            ready = int(dig(d, "status", "numberReady") or 0)
            lines.append(f"{ObjectRef.of(d)} numberReady={ready}")
            running = running or ready > 0
    for p in _kind(objects, "Pod"):
        if "dcgm-exporter" in _name(p) and dig(p, "status", "phase") == "Running":
            running = True
            lines.append(f"{ObjectRef.of(p)} Running")
    exprs: list[tuple[str, str]] = []
    for r in _kind(objects, "PrometheusRule"):
        for g in dig(r, "spec", "groups") or []:
            for rule in (g or {}).get("rules") or []:
                exprs.append((str(ObjectRef.of(r)), str((rule or {}).get("expr", ""))))
    for rule in prometheus_rules or []:
        # Rules API (/api/v1/rules) entries carry ``query``; PrometheusRule-style dicts ``expr``.
        if isinstance(rule, dict):
            exprs.append(("Prometheus rules API", str(rule.get("query") or rule.get("expr") or "")))
        elif isinstance(rule, str):
            exprs.append(("Prometheus rules API", rule))
    fields_seen = {tok for _, e in exprs for tok in _FIELD_TOKEN.findall(e)}
    missing = [what for what, f in DCGM_ALERT_FIELDS.items() if f not in fields_seen]
    for what, f in DCGM_ALERT_FIELDS.items():
        where = sorted({src for src, e in exprs if f in _FIELD_TOKEN.findall(e)})
        if where:
            lines.append(f"alert on {what} ({f}) in {', '.join(where)}")
    if not running:
        lines.insert(0, "no running dcgm-exporter DaemonSet or pod, and no DCGM samples stored")
    if missing:
        lines.append("no alert rule on " + ", ".join(f"{w} ({DCGM_ALERT_FIELDS[w]})" for w in missing))
    if running and not missing:
        return _Auto(PASS, tuple(lines), "Route the alerts to the on-call rotation.")
    return _Auto(FAIL, tuple(lines), "Run dcgm-exporter on every GPU node and alert on temperature, XID errors and utilization.")


def _queueing(objects: list[dict[str, Any]]) -> _Auto:
    cqs = [str(ObjectRef.of(o)) for o in _kind(objects, "ClusterQueue") if "kueue" in str(o.get("apiVersion", ""))]
    flavors = [str(ObjectRef.of(o)) for o in _kind(objects, "ResourceFlavor") if "kueue" in str(o.get("apiVersion", ""))]
    volcano = [str(ObjectRef.of(o)) for o in _kind(objects, "Queue") if "volcano" in str(o.get("apiVersion", ""))]
    if cqs and flavors:
        return _Auto(PASS, tuple(cqs + flavors), "Map DRA device classes in Kueue (deviceClassMappings) before moving jobs to claims.")
    if volcano:
        return _Auto(PASS, tuple(volcano), "Keep fair share in the batch scheduler.")
    lines = tuple(cqs + flavors) or ("no Kueue ClusterQueue/ResourceFlavor or batch scheduler queue",)
    return _Auto(FAIL, lines, "Configure Kueue ClusterQueues and ResourceFlavors for GPU jobs.")


def _evidence(objects: list[dict[str, Any]], gpu_nodes: list[dict[str, Any]], slices: list[Any]) -> _Auto:
    pool_of: dict[str, str] = {}
    for n in gpu_nodes:
        labels = _labels(n)
        key = next((k for k in POOL_LABELS if labels.get(k)), None)
        pool_of[_name(n)] = f"{key}={labels[key]}" if key else "(no pool label)"
    drivers: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for n in gpu_nodes:
        v = _labels(n).get(DRIVER_LABEL)
        if v:
            drivers[pool_of[_name(n)]][str(v)].add(_name(n))
    for sl in slices:
        for d in sl.devices:
            if d.driver_version and d.node_name:
                pool = pool_of.get(d.node_name, "(no pool label)")
                drivers[pool][d.driver_version].add(d.node_name)
    if not drivers:
        return _Auto(UNKNOWN, ("no driver version on nodes or slices",), "Snapshot Nodes (GFD labels) or ResourceSlices.")
    lines: list[str] = []
    bad = False
    for pool, versions in sorted(drivers.items()):
        # A slice writes 580.105.8 where GFD writes 580.105.08: compare numerically.
        norm = {tuple(int(p) if p.isdigit() else p for p in v.split(".")) for v in versions}
        if len(norm) > 1:
            bad = True
            lines.append(f"{pool}: mixed driver versions " + "; ".join(f"{v} on {', '.join(sorted(n))}" for v, n in sorted(versions.items())))
        else:
            lines.append(f"{pool}: driver {sorted(versions)[0]} on {len(set().union(*versions.values()))} node(s)")
    for n in gpu_nodes:
        cfg = _labels(n).get("nvidia.com/mig.config")
        if cfg:
            lines.append(f"Node {_name(n)} MIG profile set {cfg}")
    if bad:
        return _Auto(FAIL, tuple(lines), "Upgrade the pool to one driver version before recording evidence.")
    return _Auto(UNKNOWN, tuple(lines), "Attest the change commit and the node-replacement runbook (evidence URL).")


# --- entry point -------------------------------------------------------------------------------


def evaluate_readiness(
    objects: list[dict[str, Any]],
    now: datetime,
    attestations: Iterable[Attestation] = (),
    prometheus_rules: list[Any] | None = None,
    dcgm_devices_with_metrics: int | None = None,
) -> Readiness:
    """Evaluate the eight checklist items.

    ``objects``: raw cluster objects. ``now``: aware datetime for attestation expiry.
    ``attestations``: statements for what the cluster cannot show; the newest valid one per
    item counts. ``prometheus_rules``: rules from the Prometheus rules API (dicts with
    ``query``/``expr``, or expression strings), read in addition to PrometheusRule objects.
    ``dcgm_devices_with_metrics``: devices with stored DCGM samples (None: not known); more
    than zero counts as a running exporter for ``dcgm_alerts`` (the alert rules still need
    PrometheusRules or the rules API). No sample time enters the evidence: it moves on every
    scrape, and stored evaluations are compared line by line.

    ``objects`` without ``kind`` (e.g. the empty raw of a node known only from its slices)
    are ignored.
    """
    slices = _gpu_slices(objects)  # parsed once: three items read them
    slice_nodes = {d.node_name for sl in slices for d in sl.devices if d.node_name}
    gpu_nodes = [n for n in _kind(objects, "Node") if _is_gpu_node(n, slice_nodes)]
    auto = {
        "allocation_path": _allocation_path(objects, slices),
        "operator_pinned": _operator_pinned(objects),
        "gpu_nodes_tainted": _gpu_nodes_tainted(objects, gpu_nodes),
        "mig_geometry_declared": _mig_geometry(objects, gpu_nodes, slice_nodes),
        "gpu_node_pool": _gpu_node_pool(objects, gpu_nodes),
        "dcgm_alerts": _dcgm_alerts(objects, prometheus_rules, dcgm_devices_with_metrics),
        "queueing": _queueing(objects),
        "evidence": _evidence(objects, gpu_nodes, slices),
    }
    valid: dict[str, Attestation] = {}
    expired: dict[str, list[Attestation]] = defaultdict(list)
    for a in attestations:
        if a.valid_at(now):
            if a.item_id not in valid or a.at > valid[a.item_id].at:
                valid[a.item_id] = a
        else:
            expired[a.item_id].append(a)
    items = []
    for item_id, title in ITEMS:
        r = auto[item_id]
        lines = list(r.evidence)
        status, used = r.status, None
        for a in expired.get(item_id, []):
            # Say when it lapsed, not "now": stored evaluations are compared line by line.
            when = (f"not valid: expired {a.expires_at.isoformat()}" if a.expires_at is not None and now >= a.expires_at
                    else f"not valid before {a.at.isoformat()}")
            lines.append(f"attestation by {a.by} ({a.evidence_url}) {when}")
        if status == UNKNOWN and item_id in valid:
            used = valid[item_id]
            status = ATTESTED
            lines.append(f"attested by {used.by} at {used.at.isoformat()}: {used.evidence_url}")
        items.append(ItemResult(item_id, title, status, tuple(lines), r.next_step, used))
    passed = sum(1 for i in items if i.status in (PASS, ATTESTED))
    met = {i.id for i in items if i.status in (PASS, ATTESTED)}
    if all(item_id in met for item_id, _ in ITEMS[2:]):
        stage = "production"
    elif "allocation_path" in met:
        stage = "proof of concept"
    else:
        stage = "not started"
    return Readiness(tuple(items), passed, len(items), round(100 * passed / len(items)), stage)
