"""Generate the DRA objects for one workload and validate them against the Kubernetes schema.

Pure: no Django. For a workload with device-plugin GPU requests: a ResourceClaimTemplate
(``resource.k8s.io/v1``; DeviceClass ``gpu.nvidia.com``, or ``mig.nvidia.com`` with a CEL
selector on ``profile``; ``count`` for several devices), the patched workload (pod
``spec.resourceClaims`` + container ``resources.claims``, the ``nvidia.com/*`` limits removed),
and the DRAExtendedResource stop-gap (limit renamed to
``deviceclass.resource.kubernetes.io/gpu.nvidia.com``, or DeviceClasses with
``spec.extendedResourceName`` that keep the old names). Validation uses ``kubernetes-validate``
strict schemas.

This module writes manifests: the patched workloads are edited copies of the raw objects the
planner was given (``pod_spec``/``containers`` walk those copies), and everything else it
reads is records (``inventory.records``) or its own output.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import kubernetes_validate
from kubernetes_validate import utils as kv_utils
from packaging.version import Version

from inventory import yamltext
from inventory.kube import (
    DEVICECLASS_RESOURCE_PREFIX,
    GPU_CLASS,
    GPU_DRIVER,
    GPU_RESOURCE,
    MIG_CLASS,
    ObjectRef,
    is_gpu_resource,
    parse_version,
)
from inventory.parse import is_subdomain, name_problem
from inventory.records import DeviceClass, KubeRecord
from migration.workloads import WORKLOAD_API_VERSIONS, GpuRequest, Workload

__all__ = [
    "CLUSTER_SCOPED", "KEEP_NAME_CLASS", "MIG_CLASS", "STOPGAP_GPU_RESOURCE", "GeneratedObject", "bundles_by_namespace",
    "claim_template", "containers", "dns_label", "keep_name_classes", "patched_workload", "pod_spec",
    "requests_layout", "schema_version_for", "stopgap_workload", "validate_object",
]  # fmt: skip

STOPGAP_GPU_RESOURCE = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
KEEP_NAME_CLASS = "gpu-extended-resource.nvidia.com"
CLUSTER_SCOPED = "_cluster"  # bundle key for cluster-scoped objects (never a namespace name)
MANAGED_BY = {"app.kubernetes.io/managed-by": "claimscope"}
_DNS_LABEL = re.compile(r"[^a-z0-9-]+")
_YAML_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
_DROP_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


# Kind -> path of keys from a workload object to its pod spec (in the copies this module edits).
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}


def _dig(obj: Any, *path: str) -> Any:
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def pod_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec dict inside a workload manifest (to edit it), or None for other kinds."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind")))
    spec = _dig(obj, *path) if path else None
    return spec if isinstance(spec, dict) else None


def containers(spec: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    """(container, is_init) for every container and initContainer of a pod spec manifest."""
    for key, init in (("initContainers", True), ("containers", False)):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                yield c, init


@dataclass(frozen=True)
class GeneratedObject:
    """A Kubernetes object the plan offers. ``purpose``: ``claim_template`` | ``workload`` |
    ``stopgap_workload`` | ``stopgap_deviceclass``. ``namespace``: "" when cluster-scoped."""

    purpose: str
    namespace: str
    obj: dict[str, Any] = field(compare=False)
    source: ObjectRef | None = None

    @property
    def ref(self) -> ObjectRef:
        meta = _dig(self.obj, "metadata") or {}
        return ObjectRef(str(self.obj.get("kind") or ""), meta.get("namespace") or None, str(meta.get("name") or ""))

    @property
    def request_classes(self) -> tuple[str, ...]:
        """The DeviceClasses a generated ResourceClaimTemplate's requests name."""
        reqs = _dig(self.obj, "spec", "spec", "devices", "requests") or []
        return tuple(str(_dig(r, "exactly", "deviceClassName")) for r in reqs if _dig(r, "exactly", "deviceClassName"))


def dns_label(text: str, limit: int = 63) -> str:
    label = _DNS_LABEL.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return label or "gpu"


def requests_layout(w: Workload) -> tuple[list[tuple[str, GpuRequest]], dict[tuple[str, bool, str], str]]:
    """Claim requests (name, GpuRequest) and, per (container, is_init, resource), the request
    name that container uses. Init containers reuse an app container's request of the same resource
    when it is at least as large (they run before the app containers, as with the device
    plugin where a pod holds max(init, sum(app)) devices)."""
    own: list[tuple[str, GpuRequest]] = []
    use: dict[tuple[str, bool, str], str] = {}
    taken: set[str] = set()
    per_container: dict[tuple[str, bool], int] = defaultdict(int)
    for r in w.requests:
        per_container[(r.container, r.init)] += 1
    for r in w.requests:
        if r.init:
            continue
        base = dns_label(r.container)
        name = base if per_container[(r.container, False)] == 1 else dns_label(f"{base}-{dns_label(r.resource.split('/')[-1])}")
        while name in taken:
            name = dns_label(f"{name[:58]}-{len(taken)}")
        taken.add(name)
        own.append((name, r))
        use[(r.container, r.init, r.resource)] = name
    for r in w.requests:
        if not r.init:
            continue
        match = next((n for n, a in own if a.resource == r.resource and a.count >= r.count), None)
        if match is None:
            name = dns_label(f"{r.container}-init")
            while name in taken:
                name = dns_label(f"{name[:58]}-{len(taken)}")
            taken.add(name)
            own.append((name, r))
            match = name
        use[(r.container, r.init, r.resource)] = match
    return own, use


def claim_template(
    w: Workload, name: str, layout: list[tuple[str, GpuRequest]], selector: str | None
) -> dict[str, Any]:
    requests = []
    for rname, r in layout:
        exactly: dict[str, Any] = {"deviceClassName": MIG_CLASS if r.is_mig else GPU_CLASS, "allocationMode": "ExactCount"}
        if r.count > 1:
            exactly["count"] = r.count
        sel = (
            f"device.attributes['{GPU_DRIVER}'].profile == '{r.profile}'" if r.is_mig else selector
        )
        if sel:
            exactly["selectors"] = [{"cel": {"expression": sel}}]
        requests.append({"name": rname, "exactly": exactly})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": name,
            "namespace": w.ref.namespace or "default",
            "labels": dict(MANAGED_BY),
            "annotations": {"claimscope.io/translated-from": f"{w.ref.kind}/{w.ref.name}"},
        },
        "spec": {"spec": {"devices": {"requests": requests}}},
    }


def _clean_copy(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy fit to apply: no status, no server-set metadata."""
    out = copy.deepcopy(obj)
    out.pop("status", None)
    out.setdefault("apiVersion", WORKLOAD_API_VERSIONS.get(str(out.get("kind")), "v1"))
    meta = out.setdefault("metadata", {})
    for k in _DROP_META:
        meta.pop(k, None)
    ann = meta.get("annotations") or {}
    for k in _DROP_ANNOTATIONS:
        ann.pop(k, None)
    if "annotations" in meta and not ann:
        meta.pop("annotations")
    return out


def _strip_gpu_resources(c: dict[str, Any], rename_to: str | None = None) -> None:
    res = c.get("resources") or {}
    for key in ("limits", "requests"):
        section = res.get(key)
        if not isinstance(section, dict):
            continue
        for name in [n for n in section if is_gpu_resource(n)]:
            value = section.pop(name)
            if rename_to and name == GPU_RESOURCE:
                section[rename_to] = value
            elif rename_to:
                section[name] = value  # MIG names stay: kept by a per-profile DeviceClass
        if not section:
            res.pop(key)


def _fresh_job(obj: dict[str, Any]) -> None:
    """Job pod templates are immutable and carry generated selector labels: drop them so the
    patched Job can be created anew."""
    spec = obj.get("spec") or {}
    spec.pop("selector", None)
    spec.pop("manualSelector", None)
    labels = _dig(spec, "template", "metadata", "labels") or {}
    for k in ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"):
        labels.pop(k, None)


def patched_workload(
    raw: dict[str, Any], w: Workload, template_name: str, claim: str, use: dict[tuple[str, bool, str], str]
) -> tuple[dict[str, Any], list[str]]:
    out = _clean_copy(raw)
    notes: list[str] = []
    spec = pod_spec(out)
    assert spec is not None  # scan_workload found one
    for c, init in containers(spec):
        res = c.get("resources") or {}
        gpu = [n for n in list(res.get("limits") or {}) + list(res.get("requests") or {}) if is_gpu_resource(n)]
        if not gpu:
            continue
        names = [use[key] for n in gpu if (key := (str(c.get("name", "")), init, n)) in use]
        _strip_gpu_resources(c)
        claims = c.setdefault("resources", {}).setdefault("claims", [])
        for rname in dict.fromkeys(names):
            claims.append({"name": claim, "request": rname})
    spec.setdefault("resourceClaims", []).append({"name": claim, "resourceClaimTemplateName": template_name})
    if w.ref.kind == "Pod":
        if spec.pop("nodeName", None):
            notes.append("spec.nodeName removed: a pod bound by nodeName skips the scheduler, which allocates claims")
        notes.append("a Pod's resourceClaims cannot change: delete and recreate it")
    if w.ref.kind == "Job":
        _fresh_job(out)
        notes.append("a Job's pod template is immutable: create the patched Job anew")
    return out, notes


def stopgap_workload(raw: dict[str, Any], w: Workload) -> dict[str, Any]:
    out = _clean_copy(raw)
    spec = pod_spec(out)
    assert spec is not None
    for c, _init in containers(spec):
        _strip_gpu_resources(c, rename_to=STOPGAP_GPU_RESOURCE)
    if w.ref.kind == "Pod":
        spec.pop("nodeName", None)
    if w.ref.kind == "Job":
        _fresh_job(out)
    return out


def keep_name_classes(
    workloads: list[Workload], recs: Sequence[KubeRecord]
) -> tuple[list[GeneratedObject], list[str]]:
    """DeviceClasses with ``spec.extendedResourceName`` so pods keep ``nvidia.com/gpu`` and
    ``nvidia.com/mig-<profile>`` limits (DRAExtendedResource). Only one DeviceClass may map a
    name: names already mapped by a DeviceClass in the cluster (``recs``) are skipped."""
    mapped = {
        dc.extended_resource_name: dc.name
        for dc in recs
        if isinstance(dc, DeviceClass) and dc.extended_resource_name
    }
    notes = [f"{res} is already mapped by DeviceClass {cls}" for res, cls in sorted(mapped.items())]
    resources = sorted({(r.resource, r.profile) for w in workloads for r in w.requests if r.error is None})
    out = []
    for resource, profile in resources:
        if resource in mapped:
            continue
        base = f"device.driver == '{GPU_DRIVER}' && device.attributes['{GPU_DRIVER}'].type"
        if profile is None:
            name, expr = KEEP_NAME_CLASS, f"{base} == 'gpu'"
        else:
            name = f"mig-{dns_label(profile.replace('.', '-').replace('+', '-'))}.{GPU_CLASS}"
            expr = f"{base} == 'mig' && device.attributes['{GPU_DRIVER}'].profile == '{profile}'"
        out.append(GeneratedObject("stopgap_deviceclass", "", {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name, "labels": dict(MANAGED_BY)},
            "spec": {"selectors": [{"cel": {"expression": expr}}], "extendedResourceName": resource},
        }))
    return out, notes


# --- validation and bundles ------------------------------------------------------------------


def schema_version_for(target_version: str) -> tuple[str, str | None]:
    """(version to validate against, note). The newest schema not newer than the target;
    the newest shipped when the target is newer than anything ``kubernetes-validate`` has."""
    shipped = sorted({kv_utils.major_minor(v) for v in kv_utils.all_versions()}, key=Version)
    t = parse_version(target_version)
    if t is None:
        raise ValueError(f"target version {target_version!r} is not a Kubernetes version")
    want = Version(f"{t[0]}.{t[1]}")
    fitting = [v for v in shipped if Version(v) <= want]
    if not fitting:
        return shipped[0], f"no schema for {target_version}"
    if Version(shipped[-1]) < want:
        return shipped[-1], f"kubernetes-validate ships schemas up to {shipped[-1]}; validated against it"
    return fitting[-1], None


def validate_object(obj: dict[str, Any], version: str) -> list[str]:
    """Strict schema errors for one object (empty list when valid), and what the API server
    checks beyond the schema that a copied workload can get wrong: its name and namespace
    (``inventory.parse.name_problem``) and integers within int64 (the schema says ``int64``
    but its checker takes any size: a count of 10^20 from a hand-written file passes it).
    A claim over the DRA limits is refused before the schema is walked (a pod of 10,000 GPU
    containers would take seconds)."""
    big = [f"{where}: {value} is outside int64" for where, value in _big_ints(obj, "")][:1]
    if big:
        return big
    problem = _claim_limit_problem(obj)
    if problem is not None:
        return [problem]
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "(root)"
        return [f"{where}: {exc.message}"]
    except kubernetes_validate.SchemaNotFoundError as exc:
        return [exc.message]
    problem = name_problem(obj) or _workload_name_problem(obj)
    return [f"metadata: {problem}"] if problem is not None else []


# Workload kinds whose names the API server checks as DNS-1123 subdomains, and the shorter
# limits some have: a Job's name becomes its pods' job-name label (63), a CronJob's its Jobs'
# names with an 11-character suffix (52).
_SUBDOMAIN_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"})
_NAME_LIMITS = {"Job": 63, "CronJob": 52}


def _workload_name_problem(obj: dict[str, Any]) -> str | None:
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
    if kind not in _SUBDOMAIN_WORKLOADS or not isinstance(name, str):
        return None
    if not is_subdomain(name):
        return f"{kind} {name[:80]!r}: not a valid name (DNS-1123 subdomain: lower case, digits, '-' and '.')"
    limit = _NAME_LIMITS.get(kind)
    if limit is not None and len(name) > limit:
        return f"{kind} {name[:80]!r}: a {kind} name has at most {limit} characters ({len(name)})"
    return None


# resource.k8s.io/v1: a claim holds at most 32 requests (the API server refuses more), and the
# scheduler allocates at most 32 devices to one claim (it never allocates one asking for more).
MAX_CLAIM_REQUESTS = 32
MAX_CLAIM_DEVICES = 32


def _claim_limit_problem(obj: dict[str, Any]) -> str | None:
    kind = obj.get("kind")
    spec = pod_spec(obj)
    if spec is not None:
        # The claim the scheduler makes for a pod's DRA extended resources holds them all.
        asked = sum(q for c, _ in containers(spec) for q in _extended_counts(c))
        if asked > MAX_CLAIM_DEVICES:
            return (f"its containers ask for {asked} devices through {DEVICECLASS_RESOURCE_PREFIX}* extended resources;"
                    f" the scheduler allocates at most {MAX_CLAIM_DEVICES} to the one claim it makes for them")
        return None
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return None
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    requests = (spec.get("devices") or {}).get("requests") or []
    if len(requests) > MAX_CLAIM_REQUESTS:
        return (f"spec.devices.requests: {len(requests)} requests (one per GPU container), more than the"
                f" {MAX_CLAIM_REQUESTS} one claim may hold")
    devices = sum(r["exactly"].get("count", 1) for r in requests if isinstance(r, dict) and isinstance(r.get("exactly"), dict)
                  and r["exactly"].get("allocationMode", "ExactCount") == "ExactCount" and isinstance(r["exactly"].get("count", 1), int))
    if devices > MAX_CLAIM_DEVICES:
        return f"spec.devices.requests: {devices} devices in one claim, more than the {MAX_CLAIM_DEVICES} the scheduler allocates to one claim"
    return None


def _extended_counts(container: dict[str, Any]) -> Iterator[int]:
    res = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    asked: dict[str, int] = {}
    for part in ("requests", "limits"):  # a limit alone is the request too; both: the same value
        for name, value in (res.get(part) or {}).items() if isinstance(res.get(part), dict) else ():
            if isinstance(name, str) and name.startswith(DEVICECLASS_RESOURCE_PREFIX):
                n = value if isinstance(value, int) else int(value) if isinstance(value, str) and value.isdigit() else 0
                asked[name] = max(asked.get(name, 0), n)
    yield from asked.values()


_INT64 = range(-(2**63), 2**63)


def _big_ints(v: Any, where: str) -> Iterator[tuple[str, int]]:
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _big_ints(x, f"{where}.{k}" if where else str(k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _big_ints(x, f"{where}.{i}")
    elif isinstance(v, int) and not isinstance(v, bool) and v not in _INT64:
        yield where or "(root)", v


def _bundle_text(objs: list[dict[str, Any]], title: str) -> str:
    body = yamltext.dump_all(objs, sort_keys=False, default_flow_style=False)
    # The title names a namespace from the cluster: a line break in it would end the comment
    # and inject YAML, so every YAML line-break and control character is replaced.
    title = _YAML_BREAKS.sub("?", title)
    return f"# {title}\n---\n{body}"


def bundles_by_namespace(generated: list[GeneratedObject], purposes: set[str], schema: str) -> dict[str, str]:
    """{namespace: YAML text} of the generated objects with the given purposes; cluster-scoped
    objects under ``_cluster``. Templates come before the workloads that name them."""
    order = {"stopgap_deviceclass": 0, "claim_template": 1, "workload": 2, "stopgap_workload": 2}
    groups: dict[str, list[GeneratedObject]] = defaultdict(list)
    for g in generated:
        if g.purpose in purposes:
            groups[g.namespace or CLUSTER_SCOPED].append(g)
    out = {}
    for ns in sorted(groups):
        items = sorted(groups[ns], key=lambda g: order[g.purpose])
        what = "cluster-scoped objects" if ns == CLUSTER_SCOPED else f"namespace {ns}"
        out[ns] = _bundle_text([g.obj for g in items], f"Claimscope DRA migration plan: {what} (validated against Kubernetes {schema} schema)")
    return out
