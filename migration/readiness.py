"""The production-readiness checklist of docs/domain.md, evaluated from cluster objects.

Pure: no Django; ``now`` is passed in. ``evaluate_readiness(objects, now, attestations,
prometheus_rules, dcgm_devices_with_metrics)`` (objects: raw, or records of
``inventory.records``) returns a ``Readiness`` with one ``ItemResult`` per checklist item (stable
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inventory import records
from inventory.capacity import newest_slices
from inventory.kube import DEVICECLASS_RESOURCE_PREFIX, GPU_DRIVER, image_tag, is_gpu_resource
from inventory.records import (
    ConfigMap,
    DaemonSet,
    Deployment,
    KubeRecord,
    Node,
    OperatorResource,
    Pod,
    PrometheusRule,
    ResourceSlice,
    Taint,
)
from inventory.records.config import mig_config_names
from inventory.records.slim import slim_object, slim_pod, slim_slice

__all__ = [
    "ATTESTED", "FAIL", "ITEMS", "PASS", "READINESS_KINDS", "TITLES", "UNKNOWN", "Attestation", "ItemResult",
    "Readiness", "evaluate_readiness", "slim_object", "slim_pod", "slim_slice",
]  # fmt: skip

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
# The items a cluster at the ``production`` stage has all met (items 3 onwards).
PRODUCTION_ITEMS = tuple(item_id for item_id, _ in ITEMS[2:])

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


Records = Sequence[KubeRecord]


def _kind(recs: Records, *kinds: str) -> list[Any]:
    return [r for r in recs if r.kind in kinds]


def _gpu_allocatable(n: Node) -> bool:
    return any(is_gpu_resource(k) and v not in ("0", "") for k, v in n.allocatable.items())


def _is_gpu_node(n: Node, slice_nodes: set[str]) -> bool:
    return n.labels.get("nvidia.com/gpu.present") == "true" or _gpu_allocatable(n) or n.name in slice_nodes


# Every kind ``evaluate_readiness`` reads; a caller holding a large cluster may pass only these.
READINESS_KINDS = frozenset({
    "Node", "Pod", "DaemonSet", "Deployment", "ConfigMap", "PrometheusRule", "ClusterPolicy", "GPUCluster",
    "NVIDIADriver", "ClusterQueue", "ResourceFlavor", "Queue", "ResourceSlice",
})  # fmt: skip


def _gpu_slices(recs: Records) -> list[ResourceSlice]:
    return [s for s in recs if isinstance(s, ResourceSlice) and s.driver == GPU_DRIVER]


def _pod_uses_gpu(pod: Pod) -> bool:
    spec = pod.pod_spec
    if spec.resource_claims:
        return True
    return any(
        is_gpu_resource(n) or n.startswith(DEVICECLASS_RESOURCE_PREFIX)
        for c in spec.all_containers() for n in (*c.limits, *c.requests)
    )


# --- items -------------------------------------------------------------------------------------


def _allocation_path(recs: Records, slices: list[ResourceSlice]) -> _Auto:
    cps = [str(o.ref) for o in _kind(recs, "ClusterPolicy")]
    gcs = [str(o.ref) for o in _kind(recs, "GPUCluster")]
    if cps and gcs:
        return _Auto(FAIL, tuple(cps + gcs), "Remove one: a cluster runs the device plugin (ClusterPolicy) or DRA (GPUCluster), never both.")
    if cps or gcs:
        return _Auto(PASS, tuple(cps + gcs), "Document which path this cluster uses.")
    daemonsets = [d for d in recs if isinstance(d, DaemonSet)]
    plugins = [str(d.ref) for d in daemonsets if "device-plugin" in d.name]
    dra = [str(d.ref) for d in daemonsets if "dra-driver" in d.name and "kubelet" in d.name]
    # What the nodes show: allocatable nvidia.com/* (device plugin) vs gpu.nvidia.com slices (DRA).
    plugin_nodes = {n.name for n in recs if isinstance(n, Node) and _gpu_allocatable(n)}
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


def _operator_pinned(recs: Records) -> _Auto:
    checked: list[str] = []
    bad: list[str] = []
    for o in recs:
        if not isinstance(o, OperatorResource):
            continue
        for where, tag in o.pins:
            line = f"{o.ref} {where}: {tag or 'no tag'}"
            checked.append(line)
            if tag is None or tag == "latest":
                bad.append(line)
    charts: list[str] = []
    for d in recs:
        if not isinstance(d, Deployment):
            continue
        if d.name != "gpu-operator" and d.labels.get("app.kubernetes.io/name") != "gpu-operator":
            continue
        chart = d.labels.get("helm.sh/chart")
        if chart:
            charts.append(f"{d.ref} chart {chart}")
            if chart.endswith("-latest"):
                bad.append(f"{d.ref} chart {chart}")
        for c in d.pod_spec.all_containers():
            tag = image_tag(c.image or "")
            line = f"{d.ref} image {c.image}"
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


def _taint_text(t: Taint) -> str:
    return f"{t.key}:{t.effect}"


def _gpu_nodes_tainted(recs: Records, gpu_nodes: list[Node]) -> _Auto:
    """Pass when every GPU node carries a dedicated NoSchedule/NoExecute taint (``spec.taints``,
    key outside ``KUBERNETES_MANAGED_TAINT_PREFIXES``) and no ordinary pod (no GPU request, not a
    DaemonSet or static pod) runs on one. Evidence names each GPU node lacking a dedicated taint
    and any Kubernetes-managed taint it has instead."""
    if not gpu_nodes:
        return _Auto(UNKNOWN, ("no GPU nodes in the snapshot",), "Snapshot the Nodes.")
    evidence: list[str] = []
    untainted: list[str] = []
    for n in gpu_nodes:
        keeping = [t for t in n.taints if t.keeps_off]
        dedicated = [t for t in keeping if not (t.key or "").startswith(KUBERNETES_MANAGED_TAINT_PREFIXES)]
        managed = [t for t in keeping if t not in dedicated]
        if dedicated:
            evidence.append(f"Node {n.name} tainted {', '.join(_taint_text(t) for t in dedicated)}")
        elif managed:
            untainted.append(f"Node {n.name} has no dedicated NoSchedule/NoExecute taint (only "
                             f"{', '.join(_taint_text(t) for t in managed)}, which Kubernetes manages and removes)")
        else:
            untainted.append(f"Node {n.name} has no dedicated NoSchedule/NoExecute taint")
    names = {n.name for n in gpu_nodes}
    ordinary = []
    for p in recs:
        if not isinstance(p, Pod):
            continue
        node = p.node_name
        if node not in names or p.terminal:
            continue
        owner = p.controller
        if owner is not None and owner.kind in ("DaemonSet", "Node"):
            continue  # per-node agents and static pods belong on every node
        if not _pod_uses_gpu(p):
            ordinary.append(f"{p.ref} on {node}")
    if untainted or ordinary:
        lines = untainted + [f"ordinary pod without GPU request: {o}" for o in ordinary]
        return _Auto(FAIL, tuple(lines), "Taint GPU nodes (e.g. nvidia.com/gpu=present:NoSchedule) and give only GPU workloads the toleration.")
    return _Auto(PASS, tuple(evidence), "Keep the taint in the node pool definition.")


def _mig_configs_declared(recs: Records) -> set[str] | None:
    """Names under ``mig-configs`` in any mig-parted ConfigMap; None when there is none."""
    found: set[str] | None = None
    for cm in recs:
        if isinstance(cm, ConfigMap):
            names = mig_config_names(cm)
            if names is not None:
                found = (found or set()) | names
    return found


def _mig_geometry(recs: Records, gpu_nodes: list[Node], slice_nodes: set[str], mig_nodes: Mapping[str, int]) -> _Auto:
    """MIG labels live on Node objects (GPU feature discovery): without Node objects, or with
    GPU nodes known only from their ResourceSlices, "no MIG-capable node" cannot be shown. A
    node whose slices publish MIG instances (``mig_nodes``: node -> how many) is MIG-capable
    whatever its labels say: a layout no label declares is what this item catches."""
    capable = [n for n in gpu_nodes if n.labels.get("nvidia.com/mig.capable") == "true"
               or n.labels.get("nvidia.com/mig.config") or n.name in mig_nodes]
    if not capable:
        node_names = {n.name for n in recs if isinstance(n, Node)}
        if not node_names:
            return _Auto(UNKNOWN, ("no Node objects read; cannot see MIG labels",),
                         "Snapshot the Nodes (with their nvidia.com/mig.* labels).")
        unseen = sorted(slice_nodes - node_names)
        if unseen:
            return _Auto(UNKNOWN, (f"{len(unseen)} GPU node(s) known only from ResourceSlices, no Node object: "
                                   f"cannot see their MIG labels ({', '.join(unseen[:5])}{', ...' if len(unseen) > 5 else ''})",),
                         "Snapshot the Nodes (with their nvidia.com/mig.* labels).")
        return _Auto(PASS, ("no MIG-capable GPU nodes",), "Nothing to declare.")
    declared = _mig_configs_declared(recs)
    lines: list[str] = []
    bad: list[str] = []
    for n in capable:
        labels = n.labels
        config = labels.get("nvidia.com/mig.config")
        state = labels.get("nvidia.com/mig.config.state", "")
        if config in MIG_DISABLED and n.name in mig_nodes:
            bad.append(f"Node {n.name} mig.config={config} but publishes {mig_nodes[n.name]} MIG instance(s): the"
                       " declared layout is not the one in place")
        elif not config and n.name in mig_nodes:
            bad.append(f"Node {n.name} publishes {mig_nodes[n.name]} MIG instance(s) but has no nvidia.com/mig.config"
                       " label: its layout is declared nowhere")
        elif not config:
            bad.append(f"Node {n.name} is MIG-capable but has no nvidia.com/mig.config label")
        elif state in ("pending", "failed"):
            bad.append(f"Node {n.name} mig.config={config} stuck in state {state}")
        elif declared is not None and config not in declared:
            bad.append(f"Node {n.name} mig.config={config} is not defined in any mig-parted ConfigMap")
        else:
            lines.append(f"Node {n.name} mig.config={config} state={state or 'unset'}")
    if declared is None:
        lines.append("no mig-parted ConfigMap in the snapshot to check the names against")
    if bad:
        return _Auto(FAIL, tuple(bad + lines), "Set nvidia.com/mig.config from the node pool definition in git and fix failed layouts.")
    return _Auto(PASS, tuple(lines), "Keep the label in the node pool definition and the ConfigMap in git.")


# mig-parted's layout that turns MIG off (the GPU Operator's default ConfigMap names it so).
MIG_DISABLED = frozenset({"all-disabled"})


def _mig_instances_by_node(slices: Iterable[ResourceSlice]) -> dict[str, int]:
    """node -> MIG instances of gpu.nvidia.com its slices publish (a dynamic-MIG placement is a
    possibility, not a layout: left out)."""
    out: dict[str, int] = {}
    for sl in newest_slices(slices):  # an older generation of its pool: the scheduler does not read it
        for d in sl.devices:
            if d.driver == GPU_DRIVER and d.type == "mig" and not d.consumes_counters and d.node_name:
                out[d.node_name] = out.get(d.node_name, 0) + 1
    return out


def _gpu_node_pool(recs: Records, gpu_nodes: list[Node]) -> _Auto:
    if not gpu_nodes:
        return _Auto(UNKNOWN, ("no GPU nodes in the snapshot",), "Snapshot the Nodes.")
    gpu_names = {n.name for n in gpu_nodes}
    cpu_nodes = [n for n in recs if isinstance(n, Node) and n.name not in gpu_names]
    for key in POOL_LABELS:
        gpu_vals = {n.labels.get(key) for n in gpu_nodes}
        if None in gpu_vals:
            continue
        cpu_vals = {n.labels.get(key) for n in cpu_nodes} - {None}
        shared = gpu_vals & cpu_vals
        if shared:
            return _Auto(FAIL, (f"{key}={', '.join(sorted(map(str, shared)))} holds both GPU and CPU nodes",),
                         "Put GPU nodes in their own node pool so they scale and drain apart from CPU nodes.")
        extra = "" if cpu_nodes else " (no CPU nodes in the snapshot to compare)"
        return _Auto(PASS, (f"GPU nodes in {key}={', '.join(sorted(map(str, gpu_vals)))}{extra}",),
                     "Let the autoscaler consolidate the GPU pool by load.")
    return _Auto(FAIL, ("GPU nodes carry no node pool label (" + ", ".join(POOL_LABELS) + ")",),
                 "Create a separate GPU node pool (node group, GKE node pool, Karpenter NodePool).")


def _dcgm_alerts(recs: Records, prometheus_rules: list[Any] | None,
                 dcgm_devices_with_metrics: int | None = None) -> _Auto:
    lines: list[str] = []
    running = False
    if dcgm_devices_with_metrics:
        # DCGM samples attributed to devices of this cluster: an exporter runs and is scraped,
        # even when its DaemonSet/pods were not read (another namespace, no RBAC).
        running = True
        lines.append(f"DCGM samples stored for {dcgm_devices_with_metrics} device(s)")
    for d in recs:
        if isinstance(d, DaemonSet) and "dcgm-exporter" in d.name:
            lines.append(f"{d.ref} numberReady={d.ready}")
            running = running or d.ready > 0
    for p in recs:
        if isinstance(p, Pod) and "dcgm-exporter" in p.name and p.phase == "Running":
            running = True
            lines.append(f"{p.ref} Running")
    exprs: list[tuple[str, str]] = []
    for r in recs:
        if isinstance(r, PrometheusRule):
            exprs.extend((str(r.ref), e) for e in r.exprs)
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


def _queueing(recs: Records) -> _Auto:
    cqs = [str(o.ref) for o in _kind(recs, "ClusterQueue") if "kueue" in o.api_version]
    flavors = [str(o.ref) for o in _kind(recs, "ResourceFlavor") if "kueue" in o.api_version]
    volcano = [str(o.ref) for o in _kind(recs, "Queue") if "volcano" in o.api_version]
    if cqs and flavors:
        return _Auto(PASS, tuple(cqs + flavors), "Map DRA device classes in Kueue (deviceClassMappings) before moving jobs to claims.")
    if volcano:
        return _Auto(PASS, tuple(volcano), "Keep fair share in the batch scheduler.")
    lines = tuple(cqs + flavors) or ("no Kueue ClusterQueue/ResourceFlavor or batch scheduler queue",)
    return _Auto(FAIL, lines, "Configure Kueue ClusterQueues and ResourceFlavors for GPU jobs.")


def _evidence(gpu_nodes: list[Node], slices: list[ResourceSlice]) -> _Auto:
    pool_of: dict[str, str] = {}
    for n in gpu_nodes:
        key = next((k for k in POOL_LABELS if n.labels.get(k)), None)
        pool_of[n.name] = f"{key}={n.labels[key]}" if key else "(no pool label)"
    drivers: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for n in gpu_nodes:
        v = n.labels.get(DRIVER_LABEL)
        if v:
            drivers[pool_of[n.name]][v].add(n.name)
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
        cfg = n.labels.get("nvidia.com/mig.config")
        if cfg:
            lines.append(f"Node {n.name} MIG profile set {cfg}")
    if bad:
        return _Auto(FAIL, tuple(lines), "Upgrade the pool to one driver version before recording evidence.")
    return _Auto(UNKNOWN, tuple(lines), "Attest the change commit and the node-replacement runbook (evidence URL).")


# --- entry point -------------------------------------------------------------------------------


def evaluate_readiness(
    objects: Iterable[dict[str, Any] | KubeRecord],
    now: datetime,
    attestations: Iterable[Attestation] = (),
    prometheus_rules: list[Any] | None = None,
    dcgm_devices_with_metrics: int | None = None,
) -> Readiness:
    """Evaluate the eight checklist items.

    ``objects``: raw cluster objects (parsed here through ``inventory.records``; slices that
    cannot be parsed are skipped), or records. ``now``: aware datetime for attestation expiry.
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
    recs = list(records.as_records(objects, [], skip_unknown_versions=True, kinds=READINESS_KINDS))
    slices = _gpu_slices(recs)
    slice_nodes = {d.node_name for sl in slices for d in sl.devices if d.node_name}
    gpu_nodes = [n for n in recs if isinstance(n, Node) and _is_gpu_node(n, slice_nodes)]
    auto = {
        "allocation_path": _allocation_path(recs, slices),
        "operator_pinned": _operator_pinned(recs),
        "gpu_nodes_tainted": _gpu_nodes_tainted(recs, gpu_nodes),
        "mig_geometry_declared": _mig_geometry(recs, gpu_nodes, slice_nodes, _mig_instances_by_node(slices)),
        "gpu_node_pool": _gpu_node_pool(recs, gpu_nodes),
        "dcgm_alerts": _dcgm_alerts(recs, prometheus_rules, dcgm_devices_with_metrics),
        "queueing": _queueing(recs),
        "evidence": _evidence(gpu_nodes, slices),
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
    if all(item_id in met for item_id in PRODUCTION_ITEMS):
        stage = "production"
    elif "allocation_path" in met:
        stage = "proof of concept"
    else:
        stage = "not started"
    return Readiness(tuple(items), passed, len(items), percent_half_up(passed, len(items)), stage)


def percent_half_up(part: int, whole: int) -> int:
    """``part`` of ``whole`` in whole percent, halves rounded up (5/8 -> 63, 3/8 -> 38).

    Integer arithmetic: Python's ``round`` rounds halves to even (``round(62.5) == 62`` but
    ``round(37.5) == 38``), so two scores a half apart would round opposite ways. 0 for an
    empty ``whole``.
    """
    if whole <= 0:
        return 0
    return (200 * part + whole) // (2 * whole)

