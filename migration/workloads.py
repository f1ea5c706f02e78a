"""Find the workloads that ask the NVIDIA device plugin for GPUs.

Pure: no Django. Input is raw Kubernetes objects (dicts as ``inventory.snapshot.load_path``
returns them). A workload is a Deployment, StatefulSet, DaemonSet, Job, CronJob or a bare Pod
(a Pod with no controller ownerReference); objects owned by another scanned controller (a Job
created by a CronJob) are counted once, through their owner.

A GPU request is a container (or initContainer) resource named ``nvidia.com/gpu`` (whole GPU,
or a MIG slice under ``mig.strategy: single``) or ``nvidia.com/mig-<profile>`` (device plugin
``mixed`` strategy), read from ``resources.limits`` and, when the limit is missing,
``resources.requests``. Counts are whole devices.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
PRODUCT_LABEL = "nvidia.com/gpu.product"

# Kind -> path of keys from the object to the pod spec.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}
WORKLOAD_API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "Pod": "v1",
}

# MIG profile names as NVML prints them (1g.18gb, 1g.18gb+me, 1g.24gb+gfx, 7g.141gb); the
# device plugin turns '+' into '.' or '-' in resource names. Fixed pattern, never built from
# cluster text; it also guarantees the profile is safe inside a quoted CEL string literal.
_MIG_PROFILE = re.compile(r"^[1-9][0-9]?g\.[0-9]{1,4}gb(?:[.+-][a-z][a-z.]{0,15})?$")


@dataclass(frozen=True)
class ObjectRef:
    """Which object a fact comes from: kind, namespace ("" when cluster-scoped), name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @classmethod
    def of(cls, obj: dict[str, Any]) -> ObjectRef:
        meta = obj.get("metadata") or {}
        return cls(str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


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


def dig(obj: Any, *path: str) -> Any:
    """Follow dict keys; None as soon as a step is missing or not a dict."""
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def pod_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec inside a scanned workload kind, or None for other kinds or bad shapes."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind")))
    if path is None:
        return None
    spec = dig(obj, *path)
    return spec if isinstance(spec, dict) else None


def controller_owner(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ref in dig(obj, "metadata", "ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def containers(spec: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    """(container, is_init) for every container and initContainer of a pod spec."""
    for key, init in (("initContainers", True), ("containers", False)):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                yield c, init


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


def container_gpu_requests(c: dict[str, Any], init: bool) -> list[GpuRequest]:
    res = c.get("resources") or {}
    limits = res.get("limits") or {}
    reqs = res.get("requests") or {}
    names = [k for k in list(limits) + [k for k in reqs if k not in limits] if is_gpu_resource(k)]
    out: list[GpuRequest] = []
    for name in names:
        raw = limits.get(name, reqs.get(name))
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
        out.append(GpuRequest(str(c.get("name", "")), init, name, count, profile, error))
    return out


def is_gpu_resource(name: str) -> bool:
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


def _pinned_products(spec: dict[str, Any]) -> tuple[str, ...]:
    values: list[str] = []
    sel = spec.get("nodeSelector") or {}
    if isinstance(sel, dict) and isinstance(sel.get(PRODUCT_LABEL), str):
        values.append(sel[PRODUCT_LABEL])
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    for term in terms or []:
        for expr in (term or {}).get("matchExpressions") or []:
            if expr.get("key") == PRODUCT_LABEL and expr.get("operator") == "In":
                values.extend(str(v) for v in expr.get("values") or [])
    return tuple(dict.fromkeys(values))


def scan_workload(obj: dict[str, Any]) -> Workload | None:
    """The GPU view of one workload object, or None when it has no GPU request or claim."""
    spec = pod_spec(obj)
    if spec is None:
        return None
    requests: list[GpuRequest] = []
    stopgap: list[str] = []
    for c, init in containers(spec):
        requests.extend(container_gpu_requests(c, init))
        for key in (dig(c, "resources", "limits") or {}):
            if str(key).startswith("deviceclass.resource.kubernetes.io/"):
                stopgap.append(str(key))
    claims = tuple(str(rc.get("name")) for rc in spec.get("resourceClaims") or [] if isinstance(rc, dict))
    if not requests and not claims and not stopgap:
        return None
    owner = controller_owner(obj)
    return Workload(
        ref=ObjectRef.of(obj),
        uid=str(dig(obj, "metadata", "uid") or ""),
        requests=tuple(requests),
        claim_names=claims,
        stopgap_resources=tuple(dict.fromkeys(stopgap)),
        priority_class_name=spec.get("priorityClassName") or None,
        pinned_products=_pinned_products(spec),
        owner=f"{owner.get('kind')}/{owner.get('name')}" if owner else None,
        node_name=spec.get("nodeName") or None,
    )


def is_top_level(obj: dict[str, Any]) -> bool:
    """True for objects a person edits: bare Pods, and controllers not owned by another
    scanned controller (a CronJob's Jobs and a Deployment's Pods are reached via the owner).

    Controllers owned by something else (an InferenceService's Deployment) stay top level;
    the plan notes the owner, since editing them directly would be undone by the owner.
    """
    kind = obj.get("kind")
    if kind not in POD_SPEC_PATHS:
        return False
    owner = controller_owner(obj)
    if owner is None:
        return True
    if kind == "Pod":
        # Pods with any controller (ReplicaSet, Job, DaemonSet, Node for static pods) are not bare.
        return False
    return owner.get("kind") not in POD_SPEC_PATHS


def scan_workloads(objects: list[dict[str, Any]]) -> list[Workload]:
    """Every top-level workload with GPU requests or claims, in input order."""
    out = []
    for obj in objects:
        if is_top_level(obj):
            w = scan_workload(obj)
            if w is not None:
                out.append(w)
    return out


def orphan_gpu_pods(objects: list[dict[str, Any]]) -> list[Workload]:
    """GPU pods (device plugin or claims) whose controller is not among the objects, one per
    controller (e.g. a snapshot of pods only).

    Their owner (ReplicaSet of a Deployment, Job) is what must be translated, so the plan
    reports them instead of translating the pod, and counts them once in the steps.
    """
    seen: set[tuple[str, str, str]] = set()
    present = {
        (str(dig(o, "metadata", "namespace") or ""), str(o.get("kind")), str(dig(o, "metadata", "name")))
        for o in objects
    }
    owned_by_rs = {
        (str(dig(o, "metadata", "namespace") or ""), str(dig(o, "metadata", "name")))
        for o in objects
        if o.get("kind") == "Deployment"
    }
    out = []
    for obj in objects:
        if obj.get("kind") != "Pod":
            continue
        owner = controller_owner(obj)
        if owner is None or owner.get("kind") in ("Node", "DaemonSet"):
            continue
        ns = str(dig(obj, "metadata", "namespace") or "")
        if (ns, str(owner.get("kind")), str(owner.get("name"))) in present:
            continue
        if owner.get("kind") == "ReplicaSet":
            # ReplicaSets are named <deployment>-<pod-template-hash>; the Deployment may be present.
            deploy = str(owner.get("name", "")).rsplit("-", 1)[0]
            if (ns, deploy) in owned_by_rs:
                continue
        key = (ns, str(owner.get("kind")), str(owner.get("name")))
        w = scan_workload(obj)
        if w is not None and key not in seen:
            seen.add(key)
            out.append(w)
    return out
