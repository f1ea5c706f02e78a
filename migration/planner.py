"""Plan the move of device-plugin GPU workloads to DRA (``resource.k8s.io/v1``).

Pure: no Django. ``plan_migration(objects, server_version, target_version)`` reads raw
Kubernetes objects and returns a ``MigrationPlan``: the GPU workloads found, for each a
ResourceClaimTemplate and the patched workload (pod ``spec.resourceClaims`` plus container
``resources.claims``, the ``nvidia.com/*`` limits removed), the DRAExtendedResource stop-gap,
selector proposals for clusters that mix GPU models, blockers and warnings, the five
migration steps of the domain brief with a status each, and YAML bundles per namespace.

Every generated object is validated with ``kubernetes-validate`` (strict schema of the target
Kubernetes version, or the newest the library ships when the target is newer). An object that
fails validation is reported in ``MigrationPlan.errors`` and left out of every bundle.

Facts used: DeviceClasses ``gpu.nvidia.com`` (whole GPUs) and ``mig.nvidia.com`` (MIG
instances) of the NVIDIA DRA driver; device attributes ``productName`` and ``profile`` and
capacity ``memory`` under the ``gpu.nvidia.com`` domain; GFD node labels
``nvidia.com/gpu.product`` and ``nvidia.com/gpu.memory`` (MiB).
"""

from __future__ import annotations

import copy
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import kubernetes_validate
import yaml
from kubernetes_validate import utils as kv_utils
from packaging.version import Version

from inventory.normalize import UnknownAPIVersion, normalize
from inventory.parse import parse_resource_slice
from migration import blockers as b
from migration.workloads import (
    GPU_RESOURCE,
    PRODUCT_LABEL,
    WORKLOAD_API_VERSIONS,
    GpuRequest,
    ObjectRef,
    Workload,
    containers,
    dig,
    is_gpu_resource,
    orphan_gpu_pods,
    pod_spec,
    scan_workloads,
)

GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
STOPGAP_GPU_RESOURCE = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
KEEP_NAME_CLASS = "gpu-extended-resource.nvidia.com"
CLUSTER_SCOPED = "_cluster"  # bundle key for cluster-scoped objects (never a namespace name)
MANAGED_BY = {"app.kubernetes.io/managed-by": "claimscope"}
GIB = 2**30
MIB = 2**20
MIN_TARGET = (1, 34)
_SAFE_PRODUCT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,99}$")
_DNS_LABEL = re.compile(r"[^a-z0-9-]+")
_DROP_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")
STEP_DONE, STEP_IN_PROGRESS, STEP_TODO, STEP_BLOCKED, STEP_NOT_NEEDED = (
    "done", "in_progress", "todo", "blocked", "not_needed",
)


@dataclass(frozen=True)
class GpuModel:
    """A GPU model seen in the cluster.

    ``product``: GFD label form (``NVIDIA-H200-NVL``). ``product_name``: the DRA attribute
    ``productName`` (``NVIDIA H200 NVL``) when a ResourceSlice shows it, else None.
    ``memory_bytes``: slice capacity ``memory``, else node label ``nvidia.com/gpu.memory``
    (MiB) in bytes. ``nodes``: node names carrying it.
    """

    product: str
    product_name: str | None
    memory_bytes: int | None
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class SelectorProposal:
    """A CEL selector that keeps a request on some GPU models of a mixed cluster.

    ``basis``: ``memory`` (threshold on capacity ``memory``) or ``productName``.
    ``applied``: True when it is already in the generated template (the workload is pinned to
    these models by nodeSelector/affinity), False when offered for step 5.
    """

    models: tuple[str, ...]
    expression: str
    basis: str
    applied: bool
    reason: str


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
        return ObjectRef.of(self.obj)


@dataclass(frozen=True)
class WorkloadPlan:
    workload: Workload
    template: GeneratedObject | None
    patched: GeneratedObject | None
    stopgap: GeneratedObject | None
    selectors: tuple[SelectorProposal, ...]
    notes: tuple[str, ...]
    errors: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """One of the five migration steps. ``status``: done | in_progress | todo | blocked |
    not_needed. ``progress``: (done, total) where the step counts things, else None."""

    number: int
    id: str
    title: str
    status: str
    detail: str
    progress: tuple[int, int] | None = None


@dataclass(frozen=True)
class MigrationPlan:
    server_version: str | None
    target_version: str
    schema_version: str
    workloads: tuple[Workload, ...]
    workload_plans: tuple[WorkloadPlan, ...]
    gpu_models: tuple[GpuModel, ...]
    selector_options: tuple[SelectorProposal, ...]
    generated: tuple[GeneratedObject, ...]
    bundles: dict[str, str] = field(compare=False)
    stopgap_bundles: dict[str, str] = field(compare=False)
    findings: tuple[b.Finding, ...]
    steps: tuple[Step, ...]
    errors: tuple[str, ...]

    @property
    def blockers(self) -> tuple[b.Finding, ...]:
        return tuple(f for f in self.findings if f.severity == b.BLOCKER)

    @property
    def warnings(self) -> tuple[b.Finding, ...]:
        return tuple(f for f in self.findings if f.severity == b.WARNING)

    def templates(self) -> tuple[GeneratedObject, ...]:
        return tuple(g for g in self.generated if g.purpose == "claim_template")


# --- GPU models and selectors ----------------------------------------------------------------


def gpu_models(objects: list[dict[str, Any]]) -> list[GpuModel]:
    """GPU models from Node labels and ResourceSlice devices (type ``gpu``), by label form."""
    mem: dict[str, int | None] = {}
    names: dict[str, str | None] = {}
    nodes: dict[str, set[str]] = defaultdict(set)
    for n in objects:
        if n.get("kind") != "Node":
            continue
        labels = dig(n, "metadata", "labels") or {}
        product = labels.get(PRODUCT_LABEL)
        if not isinstance(product, str) or not product:
            continue
        mib = str(labels.get("nvidia.com/gpu.memory", ""))
        mem.setdefault(product, int(mib) * MIB if mib.isdigit() else None)
        names.setdefault(product, None)
        nodes[product].add(str(dig(n, "metadata", "name")))
    for s in objects:
        if s.get("kind") != "ResourceSlice":
            continue
        try:
            sl = parse_resource_slice(normalize(s))
        except (ValueError, UnknownAPIVersion):
            continue
        for d in sl.devices:
            if d.driver != GPU_CLASS or d.type != "gpu" or not d.product_name:
                continue
            product = d.product_name.replace(" ", "-")
            names[product] = d.product_name
            if d.memory_bytes:
                mem[product] = d.memory_bytes  # what CEL compares, so it wins over the label
            if d.node_name:
                nodes[product].add(d.node_name)
    return [GpuModel(p, names.get(p), mem.get(p), tuple(sorted(nodes[p]))) for p in sorted(mem.keys() | names.keys())]


def memory_threshold_gib(lower: int, upper: int) -> int | None:
    """A round GiB value well between two memory sizes (bytes), or None when too close.

    First multiple of 10 GiB at least 2% above ``lower`` if it stays 2% below ``upper``
    (95.6 GiB vs 140.4 GiB -> 100), else the integer midpoint. A margin survives rounding
    differences between what nodes label and what the driver publishes.
    """
    lo, hi = lower / GIB, upper / GIB
    if hi <= lo * 1.04:
        return None
    candidate = math.ceil(lo * 1.02 / 10) * 10
    if candidate < hi * 0.98:
        return candidate
    mid = math.floor((lo + hi) / 2)
    return mid if lo * 1.02 < mid < hi * 0.98 else None


def _memory_expr(gib: int, op: str) -> str:
    return f"device.capacity['{GPU_CLASS}'].memory.compareTo(quantity('{gib}Gi')) {op} 0"


def _product_name(model: GpuModel) -> str | None:
    """The productName to match: from a slice, else the label with dashes as spaces (GFD
    replaces spaces with dashes). None when the text is not safe inside a CEL literal."""
    name = model.product_name or model.product.replace("-", " ")
    return name if _SAFE_PRODUCT.match(name) else None


def selector_for(chosen: list[GpuModel], models: list[GpuModel]) -> tuple[str, str] | None:
    """(CEL expression, basis) that selects exactly the ``chosen`` models among ``models``.

    Prefers a memory threshold (survives naming differences between label and slice); falls
    back to ``productName``. None when there is nothing to tell apart or no safe expression.
    """
    others = [m for m in models if m.product not in {c.product for c in chosen}]
    if not chosen or not others:
        return None
    cm = [m.memory_bytes for m in chosen]
    om = [m.memory_bytes for m in others]
    if all(cm) and all(om):
        if min(cm) > max(om):  # type: ignore[type-var]
            gib = memory_threshold_gib(max(om), min(cm))  # type: ignore[type-var]
            if gib is not None:
                return _memory_expr(gib, ">"), "memory"
        if max(cm) < min(om):  # type: ignore[type-var]
            gib = memory_threshold_gib(max(cm), min(om))  # type: ignore[type-var]
            if gib is not None:
                return _memory_expr(gib, "<"), "memory"
    names = [_product_name(m) for m in chosen]
    if not all(names):
        return None
    attr = f"device.attributes['{GPU_CLASS}'].productName"
    if len(names) == 1:
        return f"{attr} == '{names[0]}'", "productName"
    return f"{attr} in [{', '.join(repr(n) for n in names)}]", "productName"


def selector_options(models: list[GpuModel]) -> list[SelectorProposal]:
    """For a mixed cluster, one selector per model for step 5 (empty when one model)."""
    if len(models) < 2:
        return []
    out = []
    for m in models:
        sel = selector_for([m], models)
        if sel:
            out.append(SelectorProposal((m.product,), sel[0], sel[1], False, f"keep a request on {m.product}"))
    return out


# --- generation --------------------------------------------------------------------------------


def _dns_label(text: str, limit: int = 63) -> str:
    label = _DNS_LABEL.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return label or "gpu"


def _requests_layout(w: Workload) -> tuple[list[tuple[str, GpuRequest]], dict[tuple[str, bool, str], str]]:
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
        base = _dns_label(r.container)
        name = base if per_container[(r.container, False)] == 1 else _dns_label(f"{base}-{_dns_label(r.resource.split('/')[-1])}")
        while name in taken:
            name = _dns_label(f"{name[:58]}-{len(taken)}")
        taken.add(name)
        own.append((name, r))
        use[(r.container, r.init, r.resource)] = name
    for r in w.requests:
        if not r.init:
            continue
        match = next((n for n, a in own if a.resource == r.resource and a.count >= r.count), None)
        if match is None:
            name = _dns_label(f"{r.container}-init")
            while name in taken:
                name = _dns_label(f"{name[:58]}-{len(taken)}")
            taken.add(name)
            own.append((name, r))
            match = name
        use[(r.container, r.init, r.resource)] = match
    return own, use


def _claim_template(
    w: Workload, name: str, layout: list[tuple[str, GpuRequest]], selector: str | None
) -> dict[str, Any]:
    requests = []
    for rname, r in layout:
        exactly: dict[str, Any] = {"deviceClassName": MIG_CLASS if r.is_mig else GPU_CLASS, "allocationMode": "ExactCount"}
        if r.count > 1:
            exactly["count"] = r.count
        sel = (
            f"device.attributes['{GPU_CLASS}'].profile == '{r.profile}'" if r.is_mig else selector
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
    labels = dig(spec, "template", "metadata", "labels") or {}
    for k in ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"):
        labels.pop(k, None)


def _patched_workload(
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


def _stopgap_workload(raw: dict[str, Any], w: Workload) -> dict[str, Any]:
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


def _keep_name_classes(workloads: list[Workload], objects: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """DeviceClasses with ``spec.extendedResourceName`` so pods keep ``nvidia.com/gpu`` and
    ``nvidia.com/mig-<profile>`` limits (DRAExtendedResource). Only one DeviceClass may map a
    name: names already mapped by a DeviceClass in the cluster are skipped."""
    mapped = {
        str(dig(o, "spec", "extendedResourceName")): str(dig(o, "metadata", "name"))
        for o in objects
        if o.get("kind") == "DeviceClass" and dig(o, "spec", "extendedResourceName")
    }
    notes = [f"{res} is already mapped by DeviceClass {cls}" for res, cls in sorted(mapped.items())]
    resources = sorted({(r.resource, r.profile) for w in workloads for r in w.requests if r.error is None})
    out = []
    for resource, profile in resources:
        if resource in mapped:
            continue
        base = f"device.driver == '{GPU_CLASS}' && device.attributes['{GPU_CLASS}'].type"
        if profile is None:
            name, expr = KEEP_NAME_CLASS, f"{base} == 'gpu'"
        else:
            name = f"mig-{_dns_label(profile.replace('.', '-').replace('+', '-'))}.{GPU_CLASS}"
            expr = f"{base} == 'mig' && device.attributes['{GPU_CLASS}'].profile == '{profile}'"
        out.append({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name, "labels": dict(MANAGED_BY)},
            "spec": {"selectors": [{"cel": {"expression": expr}}], "extendedResourceName": resource},
        })
    return out, notes


# --- validation and bundles ------------------------------------------------------------------


def schema_version_for(target_version: str) -> tuple[str, str | None]:
    """(version to validate against, note). The newest schema not newer than the target;
    the newest shipped when the target is newer than anything ``kubernetes-validate`` has."""
    shipped = sorted({kv_utils.major_minor(v) for v in kv_utils.all_versions()}, key=Version)
    t = b.parse_version(target_version)
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
    """Strict schema errors for one object (empty list when valid)."""
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "(root)"
        return [f"{where}: {exc.message}"]
    except kubernetes_validate.SchemaNotFoundError as exc:
        return [exc.message]
    return []


def _bundle_text(objs: list[dict[str, Any]], title: str) -> str:
    body = yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False)
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


# --- steps -------------------------------------------------------------------------------------


def _labels(o: dict[str, Any]) -> dict[str, Any]:
    return dig(o, "metadata", "labels") or {}


def migration_steps(
    objects: list[dict[str, Any]], server_version: str | None, workloads: list[Workload], plans: list[WorkloadPlan]
) -> list[Step]:
    """The five steps of the domain brief, each with a status read from the cluster."""
    has_cp = any(o.get("kind") == "ClusterPolicy" for o in objects)
    gcs = [o for o in objects if o.get("kind") == "GPUCluster"]
    server = b.parse_version(server_version)
    nodes = [o for o in objects if o.get("kind") == "Node"]
    branches = sorted({str(_labels(n)["nvidia.com/cuda.driver-version.major"]) for n in nodes if _labels(n).get("nvidia.com/cuda.driver-version.major")})
    steps = []

    new_cluster = server is not None and server >= (1, 36) and gcs and not has_cp
    steps.append(Step(1, "new_cluster", "New cluster on Kubernetes 1.36/1.37, GPU nodes on the old driver branch",
                      STEP_DONE if new_cluster else STEP_TODO,
                      (f"server {server_version or 'unknown'}; GPU nodes on driver branch "
                       f"{', '.join('R' + x for x in branches) or 'unknown'}")))

    if gcs and has_cp:
        s2, d2 = STEP_BLOCKED, "both ClusterPolicy and GPUCluster exist"
    elif gcs:
        cd = [str(ObjectRef.of(g)) for g in gcs if dig(g, "spec", "draDriver", "computeDomains", "enabled") is True]
        nvlink = any("GB2" in str(_labels(n).get(PRODUCT_LABEL, "")) or "GB3" in str(_labels(n).get(PRODUCT_LABEL, "")) for n in nodes)
        s2 = STEP_DONE
        d2 = "GPUCluster present, no ClusterPolicy"
        if cd and not nvlink:
            d2 += f"; ComputeDomains enabled in {', '.join(cd)}: turn them off on PCIe servers"
    else:
        s2, d2 = STEP_TODO, "install GPU Operator v26.7.2+ with gpuCluster.deployCR=true, clusterPolicy.deployCR=false"
    steps.append(Step(2, "gpu_operator_gpucluster", "GPU Operator v26.7.2+ with GPUCluster", s2, d2))

    mig_nodes = [n for n in nodes if _labels(n).get("nvidia.com/mig.config") not in (None, "", "all-disabled")]
    mig_workloads = [w for w in workloads if any(r.is_mig for r in w.requests)]
    states = {str(n["metadata"]["name"]): str(_labels(n).get("nvidia.com/mig.config.state", "")) for n in mig_nodes}
    if not mig_nodes and not mig_workloads:
        s3, d3 = STEP_NOT_NEEDED, "no MIG layouts or MIG workloads"
    elif any(v == "failed" for v in states.values()):
        s3, d3 = STEP_BLOCKED, "mig.config.state failed on " + ", ".join(k for k, v in states.items() if v == "failed")
    elif mig_nodes and all(v == "success" for v in states.values()):
        s3, d3 = STEP_DONE, "MIG layouts applied on " + ", ".join(sorted(states))
    elif mig_nodes:
        s3, d3 = STEP_IN_PROGRESS, "MIG layouts not yet applied on " + ", ".join(k for k, v in states.items() if v != "success")
    else:
        s3, d3 = STEP_TODO, f"{len(mig_workloads)} MIG workload(s) but no node declares nvidia.com/mig.config"
    steps.append(Step(3, "mig_layouts", "MIG layouts created before the DRA plugin starts", s3, d3))

    total = len(workloads)
    translated = sum(1 for w in workloads if w.uses_dra and not w.uses_device_plugin)
    planned = sum(1 for p in plans if p.template is not None and p.patched is not None)
    pending = total - translated
    s4 = STEP_NOT_NEEDED if total == 0 else STEP_DONE if translated == total else STEP_IN_PROGRESS if translated else STEP_TODO
    steps.append(Step(4, "translate_requests", "Every GPU request translated to a ResourceClaimTemplate", s4,
                      f"{translated} of {total} workloads use claims; the plan translates {planned} of {pending} "
                      "device-plugin workloads", (translated, total)))

    by_ns: dict[str, list[Workload]] = defaultdict(list)
    for w in workloads:
        by_ns[w.ref.namespace or "default"].append(w)
    moved = sorted(ns for ns, ws in by_ns.items() if all(not w.uses_device_plugin for w in ws))
    s5 = (STEP_NOT_NEEDED if not by_ns else STEP_DONE if len(moved) == len(by_ns)
          else STEP_IN_PROGRESS if moved else STEP_TODO)
    models = gpu_models(objects)
    d5 = f"{len(moved)} of {len(by_ns)} namespaces run on claims only"
    if len(models) > 1:
        d5 += f"; cluster mixes {len(models)} GPU models: add selectors where hardware differs"
    steps.append(Step(5, "move_services", "Move workloads service by service, selectors where hardware differs",
                      s5, d5, (len(moved), len(by_ns))))
    return steps


# --- entry point -------------------------------------------------------------------------------


def _plan_workload(
    raw: dict[str, Any], w: Workload, models: list[GpuModel], used_names: set[tuple[str, str]], schema: str
) -> WorkloadPlan:
    notes: list[str] = []
    errors = [f"{w.ref}: {r.error}" for r in w.requests if r.error]
    if w.owner:
        notes.append(f"managed by {w.owner}: change the owner's spec, or it will undo this patch")
    if errors or not w.requests:
        return WorkloadPlan(w, None, None, None, (), tuple(notes), tuple(errors))
    ns = w.ref.namespace or "default"
    name = _dns_label(f"{w.ref.name}-gpu", 253)
    if (ns, name) in used_names:
        name = _dns_label(f"{w.ref.name}-{w.ref.kind}-gpu", 253)
    used_names.add((ns, name))
    claim = "gpu"
    while claim in w.claim_names:
        claim += "-dra"

    selectors: list[SelectorProposal] = []
    selector = None
    by_product = {m.product: m for m in models}
    if w.pinned_products and len(models) > 1 and any(not r.is_mig for r in w.requests):
        chosen = [by_product.get(p) or GpuModel(p, None, None, ()) for p in w.pinned_products]
        sel = selector_for(chosen, models + [c for c in chosen if c.product not in by_product])
        if sel:
            selector = sel[0]
            selectors.append(SelectorProposal(tuple(w.pinned_products), sel[0], sel[1], True,
                                              f"pod is pinned to {', '.join(w.pinned_products)} by {PRODUCT_LABEL}"))
        else:
            notes.append(f"pinned to {', '.join(w.pinned_products)} but no selector tells it apart; template has none")
    elif w.pinned_products:
        notes.append(f"nodeSelector/affinity on {PRODUCT_LABEL} kept; one GPU model, so no selector needed")
    elif len(models) > 1:
        notes.append("cluster mixes GPU models: template has no selector (step 4); see selector options for step 5")
    if any(r.resource == GPU_RESOURCE for r in w.requests) and any(r.is_mig for r in w.requests):
        notes.append("mixes whole GPUs and MIG instances")

    layout, use = _requests_layout(w)
    template = _claim_template(w, name, layout, selector)
    patched, pnotes = _patched_workload(raw, w, name, claim, use)
    stopgap = _stopgap_workload(raw, w) if any(r.resource == GPU_RESOURCE for r in w.requests) else None
    notes.extend(pnotes)

    generated: dict[str, GeneratedObject | None] = {
        "template": GeneratedObject("claim_template", ns, template, w.ref),
        "patched": GeneratedObject("workload", ns, patched, w.ref),
        "stopgap": GeneratedObject("stopgap_workload", ns, stopgap, w.ref) if stopgap else None,
    }
    for key, g in list(generated.items()):
        if g is None:
            continue
        errs = validate_object(g.obj, schema)
        if errs:
            errors.extend(f"{w.ref}: generated {g.ref.kind} {g.ref.name} fails the {schema} schema: {e}" for e in errs)
            generated[key] = None
    if generated["template"] is None or generated["patched"] is None:
        # A workload without its template (or vice versa) would not schedule: offer neither.
        generated["template"] = generated["patched"] = None
    return WorkloadPlan(w, generated["template"], generated["patched"], generated["stopgap"],
                        tuple(selectors), tuple(notes), tuple(errors))


def plan_migration(
    objects: list[dict[str, Any]], server_version: str | None, target_version: str = "1.36"
) -> MigrationPlan:
    """Plan the move of the cluster's device-plugin GPU workloads to DRA.

    ``objects``: raw Kubernetes objects of the cluster (any kinds). ``server_version``: the
    cluster's Kubernetes version (``"v1.33.5"``, ``"1.35"``), None when unknown.
    ``target_version``: the Kubernetes version of the DRA cluster the objects are generated
    and validated for. Raises ``ValueError`` only when ``target_version`` is unreadable;
    everything else wrong is reported in ``errors`` and ``findings``.
    """
    schema, schema_note = schema_version_for(target_version)
    errors: list[str] = []
    findings: list[b.Finding] = []
    target = b.parse_version(target_version)
    if target is not None and target < MIN_TARGET:
        errors.append(f"target Kubernetes {target_version} does not serve resource.k8s.io/v1 (GA in 1.34)")
    if schema_note:
        findings.append(b.Finding("schema_version", b.INFO, schema_note))

    workloads = scan_workloads(objects)
    raw_by_ref = {ObjectRef.of(o): o for o in objects}
    models = gpu_models(objects)
    used: set[tuple[str, str]] = set()
    plans = [
        _plan_workload(raw_by_ref[w.ref], w, models, used, schema) for w in workloads if w.uses_device_plugin
    ]
    for p in plans:
        errors.extend(p.errors)
        if p.workload.owner:
            findings.append(b.Finding("workload_managed_by_owner", b.WARNING,
                                      f"{p.workload.ref} is managed by {p.workload.owner}; the patch must go "
                                      "into the owner's spec.", (p.workload.ref,)))
    for orphan in orphan_gpu_pods(objects):
        findings.append(b.Finding("controller_not_in_snapshot", b.WARNING,
                                  f"{orphan.ref} asks for GPUs and is managed by {orphan.owner}, which is not "
                                  "in the snapshot: translate its controller.", (orphan.ref,)))

    keep_classes, keep_notes = _keep_name_classes([p.workload for p in plans], objects)
    cluster_objs: list[GeneratedObject] = []
    for dc in keep_classes:
        errs = validate_object(dc, schema)
        if errs:
            errors.extend(f"generated DeviceClass {dc['metadata']['name']} fails the {schema} schema: {e}" for e in errs)
        else:
            cluster_objs.append(GeneratedObject("stopgap_deviceclass", "", dc, None))
    for note in keep_notes:
        findings.append(b.Finding("extended_resource_already_mapped", b.INFO, note))

    generated: list[GeneratedObject] = []
    for p in plans:
        generated.extend(g for g in (p.template, p.patched, p.stopgap) if g is not None)
    generated.extend(cluster_objs)

    device_classes = {
        str(r["exactly"]["deviceClassName"])
        for g in generated if g.purpose == "claim_template"
        for r in g.obj["spec"]["spec"]["devices"]["requests"]
    }
    # Gate -> (why, severity when off). The stop-gap and DynamicMIG are optional paths.
    needs: dict[str, tuple[str, str]] = {}
    if plans:
        needs["DRAExtendedResource"] = ("the extended-resource stop-gap", b.WARNING)
    if MIG_CLASS in device_classes:
        needs["DRAPartitionableDevices"] = ("DynamicMIG (static MIG does not need it)", b.WARNING)
    sharing = b.check_sharing(objects)
    if sharing:
        needs["DRAConsumableCapacity"] = ("ConsumableShares, the DRA form of per-pod GPU sharing", b.BLOCKER)

    findings.extend(b.check_priority_preemption(objects, workloads))
    findings.extend(sharing)
    findings.extend(b.check_versions(objects, server_version, target_version, needs))
    findings.extend(b.check_allocation_path(objects))
    findings.extend(b.check_kueue(objects, device_classes or {GPU_CLASS}))
    findings.extend(b.check_serving_layers(objects))
    findings.extend(b.check_mig_layout(objects, workloads))
    findings.extend(b.check_mig_single_strategy(objects, workloads))
    findings.sort(key=lambda f: b.SEVERITY_ORDER.get(f.severity, 9))

    return MigrationPlan(
        server_version=server_version,
        target_version=target_version,
        schema_version=schema,
        workloads=tuple(workloads),
        workload_plans=tuple(plans),
        gpu_models=tuple(models),
        selector_options=tuple(selector_options(models)),
        generated=tuple(generated),
        bundles=bundles_by_namespace(generated, {"claim_template", "workload"}, schema),
        stopgap_bundles=bundles_by_namespace(generated, {"stopgap_workload", "stopgap_deviceclass"}, schema),
        findings=tuple(findings),
        steps=tuple(migration_steps(objects, server_version, workloads, plans)),
        errors=tuple(errors),
    )
