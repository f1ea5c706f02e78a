"""What stands in the way of moving a device-plugin cluster's GPU workloads to DRA.

Pure: no Django. Each check reads parsed records (``inventory.records``) and returns ``Finding`` records
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
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from inventory.kube import GPU_RESOURCE, ObjectRef, feature_gates, parse_version
from inventory.records import (
    ClusterPolicy,
    ConfigMap,
    Deployment,
    KubeRecord,
    Kueue,
    Node,
    Pod,
    PriorityClass,
)
from inventory.records.config import kueue_configurations, sharing_configs
from migration.workloads import Workload

__all__ = [
    "BLOCKER", "INFO", "SEVERITY_ORDER", "WARNING", "Finding", "check_allocation_path", "check_kueue",
    "check_mig_layout", "check_mig_single_strategy", "check_priority_preemption", "check_serving_layers",
    "check_sharing", "check_versions", "control_plane_gates", "kserve_version", "kueue_device_classes",
    "parse_version",
]  # fmt: skip

BLOCKER = "blocker"
WARNING = "warning"
INFO = "info"
SEVERITY_ORDER = {BLOCKER: 0, WARNING: 1, INFO: 2}

KSERVE_CLAIMS_MIN = Version("0.21.0")
DRA_GA = (1, 34)
GATES_DEFAULT_ON = (1, 36)
# Built-in PriorityClasses exist in every cluster but rarely appear in a snapshot.
BUILTIN_PREEMPTING = {"system-cluster-critical", "system-node-critical"}
_IMAGE_TAG = re.compile(r":v?(\d+\.\d+\.\d+)[^/]*$")
_NO_MIG = (None, "", "all-disabled")
Records = Sequence[KubeRecord]


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


def _kind(recs: Records, *kinds: str) -> list[KubeRecord]:
    return [r for r in recs if r.kind in kinds]


def _mig_config(n: Node) -> str | None:
    return n.labels.get("nvidia.com/mig.config")


# --- priority preemption -------------------------------------------------------------------


def check_priority_preemption(recs: Records, workloads: list[Workload]) -> list[Finding]:
    """GPU workloads whose PriorityClass may preempt (``preemptionPolicy`` not ``Never``).

    Under DRA the scheduler does not evict lower-priority pods to free a device, so a
    service that counts on preemption to get a GPU would wait instead.
    """
    classes = {r.name: r for r in recs if isinstance(r, PriorityClass)}
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
        policy = pc.preemption_policy or "PreemptLowerPriority"
        if policy != "Never":
            out.append(Finding(
                "priority_preemption", BLOCKER,
                f"{w.ref} uses PriorityClass {w.priority_class_name} (value {pc.value}, "
                f"preemptionPolicy {policy}); Kubernetes does not preempt for DRA resources, so "
                "lower-priority GPU pods will no longer be evicted to make room for it.",
                (w.ref, pc.ref), f"preemptionPolicy={policy}",
            ))
    return out


# --- sharing ---------------------------------------------------------------------------------


def check_sharing(recs: Records) -> list[Finding]:
    """Time-slicing or MPS in a device plugin config (ConfigMap data, as the device plugin and
    the ClusterPolicy ``spec.devicePlugin.config.name`` use it).

    MPS is alpha in the DRA driver and cannot be combined with ConsumableShares or DynamicMIG.
    Device-plugin time-slicing hands out ``replicas`` pods per GPU; the DRA equivalent of
    per-pod share accounting is ConsumableShares (alpha, ``DRAConsumableCapacity`` on
    1.34/1.35), and a fixed interval needs the alpha ``TimeSlicingSettings`` gate.
    """
    out: list[Finding] = []
    policies = [r for r in recs if isinstance(r, ClusterPolicy)]
    referenced = sorted({cp.device_plugin_config for cp in policies if cp.device_plugin_config})
    cms = [r for r in recs if isinstance(r, ConfigMap)]
    found_names: set[str] = set()
    for cm in cms:
        for sharing in sharing_configs(cm):
            key, ref = sharing.key, cm.ref
            found_names.add(cm.name)
            if sharing.mps:
                out.append(Finding(
                    "gpu_sharing_mps", BLOCKER,
                    f"{ref} (key {key}) shares GPUs through MPS; MPS is alpha in the DRA driver "
                    "(not with ConsumableShares or DynamicMIG). Stay on the device plugin for "
                    "these nodes or accept an alpha feature.",
                    (ref,), f"data.{key}: sharing.mps",
                ))
            if sharing.time_slicing:
                out.append(Finding(
                    "gpu_sharing_time_slicing", BLOCKER,
                    f"{ref} (key {key}) time-slices GPUs ({list(sharing.replicas)} replicas per GPU); under DRA "
                    "pods share a GPU only through a shared claim with a GpuConfig TimeSlicing "
                    "config, and per-pod share accounting (ConsumableShares) is alpha.",
                    (ref,), f"data.{key}: sharing.timeSlicing",
                ))
    for name in referenced:
        if name not in found_names and not any(c.name == name for c in cms):
            out.append(Finding(
                "gpu_sharing_unknown", WARNING,
                f"ClusterPolicy devicePlugin.config.name points at ConfigMap {name}, which is not "
                "in the snapshot: cannot tell whether time-slicing or MPS is in use.",
                tuple(cp.ref for cp in policies), f"spec.devicePlugin.config.name={name}",
            ))
    return out


# --- Kubernetes version and feature gates ----------------------------------------------------


def control_plane_gates(recs: Records) -> dict[str, dict[str, bool]]:
    """``--feature-gates`` of kube-apiserver and kube-scheduler static pods in kube-system.

    Returns component (``kube-apiserver``/``kube-scheduler``) -> gate -> bool; a component is
    missing when its pod is not in the snapshot (managed control planes never show them).
    """
    out: dict[str, dict[str, bool]] = {}
    for pod in recs:
        if not isinstance(pod, Pod) or pod.namespace != "kube-system":
            continue
        for c in pod.pod_spec.containers:
            comp = pod.labels.get("component") or c.name
            if comp not in ("kube-apiserver", "kube-scheduler"):
                continue
            out.setdefault(comp, {}).update(feature_gates((*c.command, *c.args)))
    return out


def _target_words(target_version: str, needs: dict[str, tuple[str, str]]) -> str:
    """The new cluster's version as the plan's target says it; before 1.36, with the feature
    gates the plan needs (``needs``), which only 1.36 and later have on by default."""
    target = parse_version(target_version)
    if not needs or (target is not None and target[:2] >= GATES_DEFAULT_ON):
        return f"Kubernetes {target_version} (this plan's target)"
    return (f"Kubernetes {target_version} (this plan's target) with {', '.join(sorted(needs))} enabled by hand "
            "(on by default from 1.36)")


def check_versions(
    recs: Records,
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
    if target is not None and target[:2] < GATES_DEFAULT_ON and needs:
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
    if server[:2] < DRA_GA:
        out.append(Finding(
            "kubernetes_too_old", BLOCKER,
            f"Kubernetes {server_version} does not serve resource.k8s.io/v1 (GA in 1.34): "
            f"DRA workloads need a new cluster on {_target_words(target_version, needs)}.",
            (), f"server_version={server_version}",
        ))
        return out
    if server[:2] == (1, 34):
        out.append(Finding(
            "kubernetes_end_of_life", WARNING,
            f"Kubernetes 1.34 reached end of life on 2026-10-27; build the DRA cluster on {_target_words(target_version, needs)}.",
            (), f"server_version={server_version}",
        ))
    if server[:2] >= GATES_DEFAULT_ON:
        return out
    gates = control_plane_gates(recs)
    pods = tuple(
        p.ref for p in recs
        if isinstance(p, Pod) and p.namespace == "kube-system"
        and p.labels.get("component") in ("kube-apiserver", "kube-scheduler")
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


def check_allocation_path(recs: Records) -> list[Finding]:
    cps = [o.ref for o in _kind(recs, "ClusterPolicy")]
    gcs = [o.ref for o in _kind(recs, "GPUCluster")]
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


def _kueue_configs(recs: Records) -> list[tuple[ObjectRef, set[str]]]:
    """Kueue Configuration documents, each with the DeviceClass names it maps: the Helm
    chart's ``kueue-manager-config`` ConfigMap (any data key holding ``kind: Configuration``)
    or a Kueue-operator ``Kueue`` object."""
    out = []
    for cm in recs:
        if isinstance(cm, ConfigMap) and cm.name == "kueue-manager-config":
            out.extend((cm.ref, names) for names in kueue_configurations(cm))
    for k in recs:
        if isinstance(k, Kueue) and (k.api_version.startswith("kueue.openshift.io") or k.has_config):
            out.append((k.ref, set(k.device_classes)))
    return out


def kueue_device_classes(recs: Records) -> set[str] | None:
    """DeviceClass names Kueue maps to quota resources; None when no Kueue config is present."""
    configs = _kueue_configs(recs)
    if not configs:
        return None
    return set().union(*(names for _, names in configs))


def check_kueue(recs: Records, device_classes: set[str]) -> list[Finding]:
    """Kueue without ``deviceClassMappings`` for the DeviceClasses the plan uses: its quota
    would ignore DRA GPU requests, and jobs would run outside fair share."""
    queues = _kind(recs, "ClusterQueue")
    configs = _kueue_configs(recs)
    if not configs and not queues:
        return []
    if not configs:
        return [Finding(
            "kueue_config_unknown", WARNING,
            "Kueue ClusterQueues exist but its manager configuration is not in the snapshot: "
            "cannot tell whether DRA device classes are mapped to quota.",
            tuple(q.ref for q in queues),
        )]
    mapped = set().union(*(names for _, names in configs))
    missing = sorted(device_classes - mapped)
    if not missing:
        return []
    return [Finding(
        "kueue_without_device_class_mappings", BLOCKER,
        f"Kueue has no deviceClassMappings for {', '.join(missing)}: its quota would ignore DRA "
        "GPU requests, so queued jobs would bypass GPU quota.",
        tuple(ref for ref, _ in configs) + tuple(q.ref for q in queues),
        f"mapped device classes: {sorted(mapped) or 'none'}",
    )]


def kserve_version(recs: Records) -> Version | None:
    """KServe version from the controller image tag (``kserve/kserve-controller:v0.15.2``)."""
    for d in recs:
        if not isinstance(d, Deployment):
            continue
        for c in d.pod_spec.containers:
            image = c.image or ""
            if "kserve-controller" in image.rsplit("/", 1)[-1]:
                m = _IMAGE_TAG.search(image)
                if m:
                    try:
                        return Version(m.group(1))
                    except InvalidVersion:
                        return None
    return None


def check_serving_layers(recs: Records) -> list[Finding]:
    out: list[Finding] = []
    kserve = [o for o in _kind(recs, "InferenceService", "ServingRuntime", "ClusterServingRuntime")
              if o.api_version.startswith("serving.kserve.io/")]
    if kserve:
        version = kserve_version(recs)
        refs = tuple(o.ref for o in kserve)
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
    nims = _kind(recs, "NIMService")
    if nims:
        out.append(Finding(
            "nim_dra_tech_preview", WARNING,
            "NIM Operator supports DRA only as a technology preview; keep NIMServices on the "
            "device plugin or accept preview support.",
            tuple(o.ref for o in nims),
        ))
    return out


def check_mig_layout(recs: Records, workloads: list[Workload]) -> list[Finding]:
    """Nodes whose MIG instances must exist before the DRA kubelet plugin starts (static MIG:
    instances created later appear only after the plugin restarts)."""
    nodes = [n for n in recs if isinstance(n, Node) and _mig_config(n) not in _NO_MIG]
    mig_workloads = [w for w in workloads if any(r.is_mig for r in w.requests)]
    if not nodes and not mig_workloads:
        return []
    layouts = sorted({f"{n.name}={_mig_config(n)}" for n in nodes})
    return [Finding(
        "mig_layout_before_plugin", WARNING,
        "MIG instances must be created (MIG Manager, nvidia.com/mig.config label) before the DRA "
        "kubelet plugin starts on these nodes; instances added later appear only after a plugin "
        "restart, and DynamicMIG (alpha) deletes instances it did not create.",
        tuple(n.ref for n in nodes) + tuple(w.ref for w in mig_workloads),
        ", ".join(layouts) or "MIG workloads but no node declares a MIG layout",
    )]


def check_mig_single_strategy(recs: Records, workloads: list[Workload]) -> list[Finding]:
    """``mig.strategy: single`` advertises MIG slices as ``nvidia.com/gpu``: translating those
    requests to whole GPUs in ``gpu.nvidia.com`` would change what the pods get."""
    single = [c for c in recs if isinstance(c, ClusterPolicy) and c.mig_strategy == "single"]
    # GFD labels each node with the strategy in force; the ClusterPolicy is the fallback.
    single_nodes = []
    for n in recs:
        if not isinstance(n, Node) or _mig_config(n) in _NO_MIG:
            continue
        strategy = n.labels.get("nvidia.com/mig.strategy")
        if strategy == "single" or (strategy is None and single):
            single_nodes.append(n)
    gpu_users = [w for w in workloads if any(r.resource == GPU_RESOURCE for r in w.requests)]
    if not gpu_users or not single_nodes:
        return []
    evidence = tuple(o.ref for o in (*single, *single_nodes))
    return [Finding(
        "mig_single_strategy", WARNING,
        "MIG strategy 'single' advertises MIG instances as nvidia.com/gpu on MIG-enabled nodes; "
        "pods that landed there got a MIG slice, not a whole GPU. Check which of the translated "
        "workloads need mig.nvidia.com instead of gpu.nvidia.com.",
        evidence,
    )]
