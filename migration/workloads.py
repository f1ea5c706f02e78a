"""Find the workloads that ask the NVIDIA device plugin for GPUs.

Pure: no Django. Input is parsed records (``inventory.records``; raw objects are parsed
through that layer first). A workload is a Deployment, StatefulSet, DaemonSet, Job, CronJob
or a bare Pod (a Pod with no controller ownerReference); objects owned by another scanned
controller (a Job created by a CronJob) are counted once, through their owner.

A GPU request is a container (or initContainer) resource named ``nvidia.com/gpu`` (whole GPU,
or a MIG slice under ``mig.strategy: single``) or ``nvidia.com/mig-<profile>`` (device plugin
``mixed`` strategy), read from ``resources.limits`` and, when the limit is missing,
``resources.requests``. Counts are whole devices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inventory import records
from inventory.kube import (
    DEVICECLASS_RESOURCE_PREFIX,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    PRODUCT_LABEL,
    ObjectRef,
    is_gpu_resource,
)
from inventory.records import Container, KubeRecord, Pod, PodController, PodSpec

__all__ = [
    "GPU_RESOURCE", "MIG_RESOURCE_PREFIX", "PRODUCT_LABEL", "WORKLOAD_API_VERSIONS", "WORKLOAD_KINDS", "GpuRequest",
    "ObjectRef", "Workload", "container_gpu_requests", "is_gpu_resource", "is_top_level", "mig_profile",
    "orphan_gpu_pods", "pod_spec_of", "scan_workload", "scan_workloads",
]  # fmt: skip

WORKLOAD_API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "Pod": "v1",
}
WORKLOAD_KINDS = frozenset(WORKLOAD_API_VERSIONS)

# MIG profile names as NVML prints them (1g.18gb, 1g.18gb+me, 1g.24gb+gfx, 7g.141gb); the
# device plugin turns '+' into '.' or '-' in resource names. Fixed pattern, never built from
# cluster text; it also guarantees the profile is safe inside a quoted CEL string literal.
_MIG_PROFILE = re.compile(r"^[1-9][0-9]?g\.[0-9]{1,4}gb(?:[.+-][a-z][a-z.]{0,15})?$")


@dataclass(frozen=True)
class GpuRequest:
    """One device-plugin resource on one container.

    ``resource``: the extended resource name as written (``nvidia.com/gpu``,
    ``nvidia.com/mig-1g.18gb``). ``profile``: MIG profile for ``nvidia.com/mig-*``, else None.
    ``count``: devices asked for (limit, or request when there is no limit). ``error``: why the
    request cannot be translated (non-integer count, unrecognised MIG name), else None.
    """

    container: str
    init: bool
    resource: str
    count: int
    profile: str | None = None
    error: str | None = None

    @property
    def is_mig(self) -> bool:
        return self.resource.startswith(MIG_RESOURCE_PREFIX)


@dataclass(frozen=True)
class Workload:
    """A workload with GPU requests or DRA claims.

    ``requests``: device-plugin GPU requests (empty when it already uses claims only).
    ``claim_names``: ``spec.resourceClaims[].name`` already on its pod spec.
    ``stopgap_resources``: ``deviceclass.resource.kubernetes.io/*`` limits (DRAExtendedResource).
    ``pinned_products``: values of ``nvidia.com/gpu.product`` the pod is pinned to through
    nodeSelector or a required nodeAffinity ``In`` term (empty when not pinned).
    ``owner``: the controller ownerReference as "Kind/name" when another object manages it.
    """

    ref: ObjectRef
    uid: str
    requests: tuple[GpuRequest, ...]
    claim_names: tuple[str, ...]
    stopgap_resources: tuple[str, ...]
    priority_class_name: str | None
    pinned_products: tuple[str, ...]
    owner: str | None
    node_name: str | None

    @property
    def total_gpus(self) -> int:
        """Devices the pod holds at once: init containers run before, so max(init, sum(app))."""
        app = sum(r.count for r in self.requests if not r.init)
        init = max((r.count for r in self.requests if r.init), default=0)
        return max(app, init)

    @property
    def uses_device_plugin(self) -> bool:
        return bool(self.requests)

    @property
    def uses_dra(self) -> bool:
        return bool(self.claim_names) or bool(self.stopgap_resources)


def pod_spec_of(record: KubeRecord) -> PodSpec | None:
    """The pod spec of a scanned workload kind (a Pod's own, a controller's template), or None."""
    if isinstance(record, Pod | PodController) and record.kind in WORKLOAD_KINDS:
        return record.pod_spec
    return None


def _count(value: Any) -> int | None:
    """Extended resources are whole numbers: accept 2, "2"; anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def mig_profile(resource: str) -> str | None:
    """``nvidia.com/mig-1g.18gb`` -> ``1g.18gb``; None when the name is not a MIG profile."""
    if not resource.startswith(MIG_RESOURCE_PREFIX):
        return None
    profile = resource[len(MIG_RESOURCE_PREFIX) :]
    return profile if _MIG_PROFILE.match(profile) else None


def container_gpu_requests(c: Container) -> list[GpuRequest]:
    """The device-plugin GPU requests of one container (limit, else request, per resource)."""
    out: list[GpuRequest] = []
    for name in c.resource_names:
        if not is_gpu_resource(name):
            continue
        raw = c.limits.get(name, c.requests.get(name))
        count = _count(raw)
        error = None
        profile = None
        if count is None:
            error = f"{name}: {raw!r} is not a whole number of devices"
            count = 0
        if name.startswith(MIG_RESOURCE_PREFIX):
            profile = mig_profile(name)
            if profile is None:
                error = f"{name}: not a MIG profile name this planner recognises"
        if count == 0 and error is None:
            continue
        out.append(GpuRequest(c.name, c.init, name, count, profile, error))
    return out


def _pinned_products(spec: PodSpec) -> tuple[str, ...]:
    values: list[str] = []
    if PRODUCT_LABEL in spec.node_selector:
        values.append(spec.node_selector[PRODUCT_LABEL])
    for term in spec.required_node_terms:
        for expr in term.match_expressions:
            if expr.key == PRODUCT_LABEL and expr.operator == "In":
                values.extend(expr.values)
    return tuple(dict.fromkeys(values))


def _record(obj: KubeRecord | dict[str, Any]) -> KubeRecord | None:
    return obj if isinstance(obj, KubeRecord) else records.parse_object(obj)


def scan_workload(obj: KubeRecord | dict[str, Any]) -> Workload | None:
    """The GPU view of one workload (a record, or a raw object parsed here), or None when it
    has no GPU request or claim."""
    rec = _record(obj)
    spec = pod_spec_of(rec) if rec is not None else None
    if rec is None or spec is None:
        return None
    requests: list[GpuRequest] = []
    stopgap: list[str] = []
    for c in spec.all_containers():
        requests.extend(container_gpu_requests(c))
        stopgap.extend(k for k in c.limits if k.startswith(DEVICECLASS_RESOURCE_PREFIX))
    claims = tuple(rc.name for rc in spec.resource_claims)
    if not requests and not claims and not stopgap:
        return None
    owner = rec.controller
    return Workload(
        ref=rec.ref,
        uid=rec.uid,
        requests=tuple(requests),
        claim_names=claims,
        stopgap_resources=tuple(dict.fromkeys(stopgap)),
        priority_class_name=spec.priority_class_name,
        pinned_products=_pinned_products(spec),
        owner=f"{owner.kind}/{owner.name}" if owner else None,
        node_name=spec.node_name,
    )


def is_top_level(rec: KubeRecord) -> bool:
    """True for objects a person edits: bare Pods, and controllers not owned by another
    scanned controller (a CronJob's Jobs and a Deployment's Pods are reached via the owner).

    Controllers owned by something else (an InferenceService's Deployment) stay top level;
    the plan notes the owner, since editing them directly would be undone by the owner.
    """
    if rec.kind not in WORKLOAD_KINDS:
        return False
    owner = rec.controller
    if owner is None:
        return True
    if rec.kind == "Pod":
        # Pods with any controller (ReplicaSet, Job, DaemonSet, Node for static pods) are not bare.
        return False
    return owner.kind not in WORKLOAD_KINDS


def scan_workloads(objects: Iterable[KubeRecord | dict[str, Any]]) -> list[Workload]:
    """Every top-level workload with GPU requests or claims, in input order (records, or raw
    objects parsed here)."""
    out = []
    for rec in records.as_records(objects, [], skip_unknown_versions=True):
        if is_top_level(rec):
            w = scan_workload(rec)
            if w is not None:
                out.append(w)
    return out


def orphan_gpu_pods(objects: Iterable[KubeRecord | dict[str, Any]]) -> list[Workload]:
    """GPU pods (device plugin or claims) whose controller is not among the objects, one per
    controller (e.g. a snapshot of pods only).

    Their owner (ReplicaSet of a Deployment, Job) is what must be translated, so the plan
    reports them instead of translating the pod, and counts them once in the steps.
    ``objects``: records (raw objects are parsed here); any kind counts as a present owner.
    """
    recs = list(records.as_records(objects, [], skip_unknown_versions=True, keep_unknown=True))
    seen: set[tuple[str, str, str]] = set()
    present = {(r.namespace or "", r.kind, r.name) for r in recs}
    deployments = {(r.namespace or "", r.name) for r in recs if r.kind == "Deployment"}
    out = []
    for rec in recs:
        if rec.kind != "Pod":
            continue
        owner = rec.controller
        if owner is None or owner.kind in ("Node", "DaemonSet"):
            continue
        ns = rec.namespace or ""
        key = (ns, owner.kind, owner.name)
        if key in present:
            continue
        if owner.kind == "ReplicaSet" and (ns, owner.name.rsplit("-", 1)[0]) in deployments:
            # ReplicaSets are named <deployment>-<pod-template-hash>; the Deployment is present.
            continue
        w = scan_workload(rec)
        if w is not None and key not in seen:
            seen.add(key)
            out.append(w)
    return out
