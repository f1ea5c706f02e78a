"""What stands in the way of moving a device-plugin cluster's GPU workloads to DRA.

Pure: no Django. Each check reads raw Kubernetes objects and returns ``Finding`` records
with a stable ``code``, a ``severity`` (``blocker``: the plan cannot carry the behaviour over;
``warning``: the plan works but someone must act or decide; ``info``: context), a reason in
words, and the evidence objects.

Facts used (see docs/domain.md): Kubernetes does not preempt for DRA resources; MPS and
per-pod GPU share accounting are alpha in the NVIDIA DRA driver v0.5.x; ``DRAExtendedResource``,
``DRAPartitionableDevices`` and ``DRAConsumableCapacity`` are on by default only from 1.36;
a cluster has a ClusterPolicy or a GPUCluster, never both, and switching in place is
unsupported; KServe supports claims in ServingRuntime from 0.21.0; NIM Operator has DRA as a
technology preview; static MIG instances must exist before the DRA kubelet plugin starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from packaging.version import InvalidVersion, Version

from migration.workloads import ObjectRef, Workload, dig

BLOCKER = "blocker"
WARNING = "warning"
INFO = "info"
SEVERITY_ORDER = {BLOCKER: 0, WARNING: 1, INFO: 2}

KSERVE_CLAIMS_MIN = Version("0.21.0")
DRA_GA = (1, 34)
GATES_DEFAULT_ON = (1, 36)
# Built-in PriorityClasses exist in every cluster but rarely appear in a snapshot.
BUILTIN_PREEMPTING = {"system-cluster-critical", "system-node-critical"}
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")
_IMAGE_TAG = re.compile(r":v?(\d+\.\d+\.\d+)[^/]*$")


@dataclass(frozen=True)
class Finding:
    """One blocker or warning.

    ``code``: stable id (``priority_preemption``, ``gpu_sharing_mps`` ...). ``severity``:
    ``blocker`` | ``warning`` | ``info``. ``reason``: one sentence saying what breaks and why.
    ``evidence``: the objects the reason rests on. ``detail``: the field values read.
    """

    code: str
    severity: str
    reason: str
    evidence: tuple[ObjectRef, ...] = ()
    detail: str = ""


def parse_version(text: str | None) -> tuple[int, int] | None:
    """``"v1.35.2-eks-3"`` -> (1, 35); None when unreadable."""
    if not text:
        return None
    m = _VERSION.match(text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _kind(objects: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") in kinds]


def _name(obj: dict[str, Any]) -> str:
    return str(dig(obj, "metadata", "name") or "")


# --- priority preemption -------------------------------------------------------------------


def check_priority_preemption(objects: list[dict[str, Any]], workloads: list[Workload]) -> list[Finding]:
    """GPU workloads whose PriorityClass may preempt (``preemptionPolicy`` not ``Never``).

    Under DRA the scheduler does not evict lower-priority pods to free a device, so a
    service that counts on preemption to get a GPU would wait instead.
    """
    classes = {_name(o): o for o in _kind(objects, "PriorityClass")}
    out = []
    for w in workloads:
        if not w.uses_device_plugin or not w.priority_class_name:
            continue
        pc = classes.get(w.priority_class_name)
        if pc is None:
            if w.priority_class_name in BUILTIN_PREEMPTING:
                out.append(Finding(
                    "priority_preemption", BLOCKER,
                    f"{w.ref} runs at built-in priority {w.priority_class_name}, which preempts; "
                    "Kubernetes does not preempt for DRA resources.",
                    (w.ref,), f"priorityClassName={w.priority_class_name}",
                ))
            else:
                out.append(Finding(
                    "priority_class_unknown", WARNING,
                    f"{w.ref} names PriorityClass {w.priority_class_name}, which is not in the "
                    "snapshot: cannot tell whether it relies on preemption.",
                    (w.ref,), f"priorityClassName={w.priority_class_name}",
                ))
            continue
        policy = pc.get("preemptionPolicy") or "PreemptLowerPriority"
        if policy != "Never":
            out.append(Finding(
                "priority_preemption", BLOCKER,
                f"{w.ref} uses PriorityClass {w.priority_class_name} (value {pc.get('value')}, "
                f"preemptionPolicy {policy}); Kubernetes does not preempt for DRA resources, so "
                "lower-priority GPU pods will no longer be evicted to make room for it.",
                (w.ref, ObjectRef.of(pc)), f"preemptionPolicy={policy}",
            ))
    return out


# --- sharing ---------------------------------------------------------------------------------


def _sharing_of(text: Any) -> dict[str, Any]:
    """The ``sharing`` block of one device plugin config document, {} when absent or not YAML."""
    if not isinstance(text, str) or "sharing" not in text:
        return {}
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    sharing = doc.get("sharing") if isinstance(doc, dict) else None
    return sharing if isinstance(sharing, dict) else {}


def check_sharing(objects: list[dict[str, Any]]) -> list[Finding]:
    """Time-slicing or MPS in a device plugin config (ConfigMap data, as the device plugin and
    the ClusterPolicy ``spec.devicePlugin.config.name`` use it).

    MPS is alpha in the DRA driver and cannot be combined with ConsumableShares or DynamicMIG.
    Device-plugin time-slicing hands out ``replicas`` pods per GPU; the DRA equivalent of
    per-pod share accounting is ConsumableShares (alpha, ``DRAConsumableCapacity`` on
    1.34/1.35), and a fixed interval needs the alpha ``TimeSlicingSettings`` gate.
    """
    out: list[Finding] = []
    referenced: set[tuple[str, str]] = set()
    for cp in _kind(objects, "ClusterPolicy"):
        name = dig(cp, "spec", "devicePlugin", "config", "name")
        if name:
            referenced.add(("", str(name)))
    found_names: set[str] = set()
    for cm in _kind(objects, "ConfigMap"):
        for key, text in (cm.get("data") or {}).items():
            sharing = _sharing_of(text)
            ref = ObjectRef.of(cm)
            if sharing.get("mps"):
                found_names.add(_name(cm))
                out.append(Finding(
                    "gpu_sharing_mps", BLOCKER,
                    f"{ref} (key {key}) shares GPUs through MPS; MPS is alpha in the DRA driver "
                    "(not with ConsumableShares or DynamicMIG). Stay on the device plugin for "
                    "these nodes or accept an alpha feature.",
                    (ref,), f"data.{key}: sharing.mps",
                ))
            ts = sharing.get("timeSlicing")
            if ts:
                found_names.add(_name(cm))
                replicas = [r.get("replicas") for r in (ts.get("resources") or []) if isinstance(r, dict)]
                out.append(Finding(
                    "gpu_sharing_time_slicing", BLOCKER,
                    f"{ref} (key {key}) time-slices GPUs ({replicas} replicas per GPU); under DRA "
                    "pods share a GPU only through a shared claim with a GpuConfig TimeSlicing "
                    "config, and per-pod share accounting (ConsumableShares) is alpha.",
                    (ref,), f"data.{key}: sharing.timeSlicing",
                ))
    for _, name in sorted(referenced):
        if name not in found_names and not any(_name(c) == name for c in _kind(objects, "ConfigMap")):
            cps = tuple(ObjectRef.of(c) for c in _kind(objects, "ClusterPolicy"))
            out.append(Finding(
                "gpu_sharing_unknown", WARNING,
                f"ClusterPolicy devicePlugin.config.name points at ConfigMap {name}, which is not "
                "in the snapshot: cannot tell whether time-slicing or MPS is in use.",
                cps, f"spec.devicePlugin.config.name={name}",
            ))
    return out


# --- Kubernetes version and feature gates ----------------------------------------------------


def control_plane_gates(objects: list[dict[str, Any]]) -> dict[str, dict[str, bool]]:
    """``--feature-gates`` of kube-apiserver and kube-scheduler static pods in kube-system.

    Returns component (``kube-apiserver``/``kube-scheduler``) -> gate -> bool; a component is
    missing when its pod is not in the snapshot (managed control planes never show them).
    """
    out: dict[str, dict[str, bool]] = {}
    for pod in _kind(objects, "Pod"):
        if dig(pod, "metadata", "namespace") != "kube-system":
            continue
        labels = dig(pod, "metadata", "labels") or {}
        for c in dig(pod, "spec", "containers") or []:
            comp = labels.get("component") or c.get("name")
            if comp not in ("kube-apiserver", "kube-scheduler"):
                continue
            gates = out.setdefault(str(comp), {})
            for arg in list(c.get("command") or []) + list(c.get("args") or []):
                if isinstance(arg, str) and arg.startswith("--feature-gates="):
                    for pair in arg.split("=", 1)[1].split(","):
                        k, _, v = pair.partition("=")
                        if k.strip():
                            gates[k.strip()] = v.strip().lower() == "true"
    return out


def check_versions(
    objects: list[dict[str, Any]],
    server_version: str | None,
    target_version: str,
    needs: dict[str, tuple[str, str]],
) -> list[Finding]:
    """Server and target Kubernetes versions against what the plan needs.

    ``needs``: feature gate -> (why the plan needs it, severity when it is off), e.g.
    DRAExtendedResource for the optional stop-gap is a warning. Below 1.34 DRA v1 is not served; on 1.34/1.35 each needed gate must be on in
    both kube-apiserver and kube-scheduler (read from static pods when the snapshot has them).
    """
    out: list[Finding] = []
    target = parse_version(target_version)
    if target is not None and target < GATES_DEFAULT_ON and needs:
        out.append(Finding(
            "target_gates_off_by_default", WARNING,
            f"Target Kubernetes {target_version}: {', '.join(sorted(needs))} are off by default "
            "before 1.36 and must be enabled by hand in the new cluster.",
            (), "; ".join(f"{g}: {why}" for g, (why, _) in sorted(needs.items())),
        ))
    server = parse_version(server_version)
    if server is None:
        out.append(Finding(
            "server_version_unknown", WARNING,
            "Server version not given: cannot tell whether this cluster serves resource.k8s.io/v1.",
        ))
        return out
    if server < DRA_GA:
        out.append(Finding(
            "kubernetes_too_old", BLOCKER,
            f"Kubernetes {server_version} does not serve resource.k8s.io/v1 (GA in 1.34): "
            "DRA workloads need a new cluster on 1.36 or 1.37.",
            (), f"server_version={server_version}",
        ))
        return out
    if server == (1, 34):
        out.append(Finding(
            "kubernetes_end_of_life", WARNING,
            "Kubernetes 1.34 reached end of life on 2026-10-27; build the DRA cluster on 1.36 or 1.37.",
            (), f"server_version={server_version}",
        ))
    if server >= GATES_DEFAULT_ON:
        return out
    gates = control_plane_gates(objects)
    pods = tuple(
        ObjectRef.of(p) for p in _kind(objects, "Pod")
        if dig(p, "metadata", "namespace") == "kube-system"
        and (dig(p, "metadata", "labels") or {}).get("component") in ("kube-apiserver", "kube-scheduler")
    )
    for gate, (why, severity) in sorted(needs.items()):
        if not gates:
            out.append(Finding(
                "feature_gate_unknown", WARNING,
                f"Kubernetes {server_version} needs {gate} ({why}); no kube-apiserver or "
                "kube-scheduler static pod in the snapshot, so its state cannot be read.",
                (), f"{gate}: unknown",
            ))
            continue
        off = [c for c in ("kube-apiserver", "kube-scheduler") if not gates.get(c, {}).get(gate, False)]
        if off:
            out.append(Finding(
                "feature_gate_off", severity,
                f"Kubernetes {server_version} needs {gate} for {why}, but it is not enabled on "
                f"{', '.join(off)}.",
                pods, f"{gate} off on {', '.join(off)}",
            ))
    return out


# --- allocation path, Kueue, serving layers, MIG --------------------------------------------


def check_allocation_path(objects: list[dict[str, Any]]) -> list[Finding]:
    cps = [ObjectRef.of(o) for o in _kind(objects, "ClusterPolicy")]
    gcs = [ObjectRef.of(o) for o in _kind(objects, "GPUCluster")]
    out = []
    if cps and gcs:
        out.append(Finding(
            "both_clusterpolicy_and_gpucluster", BLOCKER,
            "Both a ClusterPolicy and a GPUCluster exist; a cluster has one or the other, and the "
            "device plugin and DRA driver must not serve the same GPUs.",
            tuple(cps + gcs),
        ))
    elif cps:
        out.append(Finding(
            "clusterpolicy_in_place_unsupported", WARNING,
            "A ClusterPolicy manages this cluster; switching it to a GPUCluster in place is "
            "unsupported, so the plan is a new cluster that workloads move to.",
            tuple(cps),
        ))
    return out


def _kueue_configs(objects: list[dict[str, Any]]) -> list[tuple[ObjectRef, dict[str, Any]]]:
    """Kueue Configuration documents: the Helm chart's ``kueue-manager-config`` ConfigMap
    (any data key holding ``kind: Configuration``) or a Kueue-operator ``Kueue`` object."""
    out = []
    for cm in _kind(objects, "ConfigMap"):
        if _name(cm) != "kueue-manager-config":
            continue
        for text in (cm.get("data") or {}).values():
            try:
                doc = yaml.safe_load(text) if isinstance(text, str) else None
            except yaml.YAMLError:
                doc = None
            if isinstance(doc, dict) and doc.get("kind") == "Configuration":
                out.append((ObjectRef.of(cm), doc))
    for k in _kind(objects, "Kueue"):
        if str(k.get("apiVersion", "")).startswith("kueue.openshift.io") or dig(k, "spec", "config"):
            out.append((ObjectRef.of(k), dig(k, "spec", "config") or {}))
    return out


def kueue_device_classes(objects: list[dict[str, Any]]) -> set[str] | None:
    """DeviceClass names Kueue maps to quota resources; None when no Kueue config is present."""
    configs = _kueue_configs(objects)
    if not configs:
        return None
    names: set[str] = set()
    for _, doc in configs:
        for m in dig(doc, "resources", "deviceClassMappings") or doc.get("deviceClassMappings") or []:
            if isinstance(m, dict):
                names.update(str(n) for n in m.get("deviceClassNames") or [])
    return names


def check_kueue(objects: list[dict[str, Any]], device_classes: set[str]) -> list[Finding]:
    """Kueue without ``deviceClassMappings`` for the DeviceClasses the plan uses: its quota
    would ignore DRA GPU requests, and jobs would run outside fair share."""
    queues = _kind(objects, "ClusterQueue")
    configs = _kueue_configs(objects)
    if not configs and not queues:
        return []
    if not configs:
        return [Finding(
            "kueue_config_unknown", WARNING,
            "Kueue ClusterQueues exist but its manager configuration is not in the snapshot: "
            "cannot tell whether DRA device classes are mapped to quota.",
            tuple(ObjectRef.of(q) for q in queues),
        )]
    mapped = kueue_device_classes(objects) or set()
    missing = sorted(device_classes - mapped)
    if not missing:
        return []
    return [Finding(
        "kueue_without_device_class_mappings", BLOCKER,
        f"Kueue has no deviceClassMappings for {', '.join(missing)}: its quota would ignore DRA "
        "GPU requests, so queued jobs would bypass GPU quota.",
        tuple(ref for ref, _ in configs) + tuple(ObjectRef.of(q) for q in queues),
        f"mapped device classes: {sorted(mapped) or 'none'}",
    )]


def kserve_version(objects: list[dict[str, Any]]) -> Version | None:
    """KServe version from the controller image tag (``kserve/kserve-controller:v0.15.2``)."""
    for d in _kind(objects, "Deployment"):
        for c in dig(d, "spec", "template", "spec", "containers") or []:
            image = str(c.get("image", ""))
            if "kserve-controller" in image.rsplit("/", 1)[-1]:
                m = _IMAGE_TAG.search(image)
                if m:
                    try:
                        return Version(m.group(1))
                    except InvalidVersion:
                        return None
    return None


def check_serving_layers(objects: list[dict[str, Any]]) -> list[Finding]:
    out: list[Finding] = []
    kserve = _kind(objects, "InferenceService", "ServingRuntime", "ClusterServingRuntime")
    kserve = [o for o in kserve if str(o.get("apiVersion", "")).startswith("serving.kserve.io/")]
    if kserve:
        version = kserve_version(objects)
        refs = tuple(ObjectRef.of(o) for o in kserve)
        if version is None:
            out.append(Finding(
                "kserve_version_unknown", WARNING,
                "KServe objects exist but the KServe controller version cannot be read; "
                f"resourceClaims in ServingRuntime need KServe {KSERVE_CLAIMS_MIN} or newer.",
                refs,
            ))
        elif version < KSERVE_CLAIMS_MIN:
            out.append(Finding(
                "kserve_without_claims", BLOCKER,
                f"KServe {version} cannot pass resourceClaims to its predictors (supported from "
                f"{KSERVE_CLAIMS_MIN}); upgrade KServe before moving these services.",
                refs, f"kserve-controller {version}",
            ))
    nims = [o for o in _kind(objects, "NIMService", "NIMCache") if o.get("kind") == "NIMService"]
    if nims:
        out.append(Finding(
            "nim_dra_tech_preview", WARNING,
            "NIM Operator supports DRA only as a technology preview; keep NIMServices on the "
            "device plugin or accept preview support.",
            tuple(ObjectRef.of(o) for o in nims),
        ))
    return out


def check_mig_layout(objects: list[dict[str, Any]], workloads: list[Workload]) -> list[Finding]:
    """Nodes whose MIG instances must exist before the DRA kubelet plugin starts (static MIG:
    instances created later appear only after the plugin restarts)."""
    nodes = [
        n for n in _kind(objects, "Node")
        if (dig(n, "metadata", "labels") or {}).get("nvidia.com/mig.config") not in (None, "", "all-disabled")
    ]
    mig_workloads = [w for w in workloads if any(r.is_mig for r in w.requests)]
    if not nodes and not mig_workloads:
        return []
    layouts = sorted({
        f"{_name(n)}={(dig(n, 'metadata', 'labels') or {}).get('nvidia.com/mig.config')}" for n in nodes
    })
    return [Finding(
        "mig_layout_before_plugin", WARNING,
        "MIG instances must be created (MIG Manager, nvidia.com/mig.config label) before the DRA "
        "kubelet plugin starts on these nodes; instances added later appear only after a plugin "
        "restart, and DynamicMIG (alpha) deletes instances it did not create.",
        tuple(ObjectRef.of(n) for n in nodes) + tuple(w.ref for w in mig_workloads),
        ", ".join(layouts) or "MIG workloads but no node declares a MIG layout",
    )]


def check_mig_single_strategy(objects: list[dict[str, Any]], workloads: list[Workload]) -> list[Finding]:
    """``mig.strategy: single`` advertises MIG slices as ``nvidia.com/gpu``: translating those
    requests to whole GPUs in ``gpu.nvidia.com`` would change what the pods get."""
    single = [c for c in _kind(objects, "ClusterPolicy") if dig(c, "spec", "mig", "strategy") == "single"]
    # GFD labels each node with the strategy in force; the ClusterPolicy is the fallback.
    single_nodes = []
    for n in _kind(objects, "Node"):
        labels = dig(n, "metadata", "labels") or {}
        if labels.get("nvidia.com/mig.config") in (None, "", "all-disabled"):
            continue
        strategy = labels.get("nvidia.com/mig.strategy")
        if strategy == "single" or (strategy is None and single):
            single_nodes.append(n)
    gpu_users = [w for w in workloads if any(r.resource == "nvidia.com/gpu" for r in w.requests)]
    if not gpu_users or not single_nodes:
        return []
    evidence = tuple(ObjectRef.of(o) for o in single + single_nodes)
    return [Finding(
        "mig_single_strategy", WARNING,
        "MIG strategy 'single' advertises MIG instances as nvidia.com/gpu on MIG-enabled nodes; "
        "pods that landed there got a MIG slice, not a whole GPU. Check which of the translated "
        "workloads need mig.nvidia.com instead of gpu.nvidia.com.",
        evidence,
    )]
