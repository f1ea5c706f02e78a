"""Plan the move of device-plugin GPU workloads to DRA (``resource.k8s.io/v1``).

Pure: no Django. ``plan_migration(objects, server_version, target_version)`` reads raw
Kubernetes objects (parsed through ``inventory.records``; ``plan_records`` takes the records)
and returns a ``MigrationPlan``: the GPU workloads found, for each a
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

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inventory import records
from inventory.kube import GPU_CLASS, GPU_RESOURCE, PRODUCT_LABEL, ObjectRef, parse_version
from inventory.records import GPUCluster, KubeRecord, Node
from migration import blockers as b
from migration.generate import (
    MIG_CLASS,
    GeneratedObject,
    bundles_by_namespace,
    claim_template,
    dns_label,
    keep_name_classes,
    patched_workload,
    requests_layout,
    schema_version_for,
    stopgap_workload,
    validate_object,
)
from migration.selectors import GpuModel, SelectorProposal, gpu_models, selector_for, selector_options
from migration.workloads import Workload, orphan_gpu_pods, scan_workloads

MIN_TARGET = (1, 34)
STEP_DONE, STEP_IN_PROGRESS, STEP_TODO, STEP_BLOCKED, STEP_NOT_NEEDED = (
    "done", "in_progress", "todo", "blocked", "not_needed",
)


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


# --- steps -------------------------------------------------------------------------------------


def migration_steps(
    recs: Sequence[KubeRecord], server_version: str | None, workloads: list[Workload], plans: list[WorkloadPlan],
    target_version: str = "1.36",
) -> list[Step]:
    """The five steps of the domain brief, each with a status read from the cluster (the new
    cluster's step on ``target_version``).

    ``recs``: the cluster's records. ``workloads``: top-level GPU workloads plus one GPU pod
    per controller missing from the objects (so pod-only snapshots still count). ``plans``:
    the per-workload plans.
    """
    has_cp = any(r.kind == "ClusterPolicy" for r in recs)
    gcs = [r for r in recs if isinstance(r, GPUCluster)]
    server = parse_version(server_version)
    nodes = [r for r in recs if isinstance(r, Node)]
    branches = sorted({n.labels["nvidia.com/cuda.driver-version.major"] for n in nodes if n.labels.get("nvidia.com/cuda.driver-version.major")})
    steps = []

    target = parse_version(target_version) or (1, 36)
    # What this cluster still lacks to count as the new cluster, so a "todo" says why.
    missing = []
    if server is None or server[:2] < target[:2]:
        missing.append(f"the server on {target_version} or later" + (" (its version is unknown)" if server is None else ""))
    if not gcs:
        missing.append("a GPUCluster (GPU Operator v26.7.2+, step 2)")
    if has_cp:
        missing.append("no ClusterPolicy (the new cluster runs the GPU Operator through GPUCluster only)")
    steps.append(Step(1, "new_cluster", f"New cluster on Kubernetes {target_version}, GPU nodes on the old driver branch",
                      STEP_TODO if missing else STEP_DONE,
                      (f"server {server_version or 'unknown'}; GPU nodes on driver branch "
                       f"{', '.join('R' + x for x in branches) or 'unknown'}"
                       + (f"; not done: needs {' and '.join(missing)}" if missing else ""))))

    if gcs and has_cp:
        s2, d2 = STEP_BLOCKED, "both ClusterPolicy and GPUCluster exist"
    elif gcs:
        cd = [str(g.ref) for g in gcs if g.compute_domains_enabled]
        nvlink = any("GB2" in n.labels.get(PRODUCT_LABEL, "") or "GB3" in n.labels.get(PRODUCT_LABEL, "") for n in nodes)
        s2 = STEP_DONE
        d2 = "GPUCluster present, no ClusterPolicy"
        if cd and not nvlink:
            d2 += f"; ComputeDomains enabled in {', '.join(cd)}: turn them off on PCIe servers"
    else:
        s2, d2 = STEP_TODO, "install GPU Operator v26.7.2+ with gpuCluster.deployCR=true, clusterPolicy.deployCR=false"
    steps.append(Step(2, "gpu_operator_gpucluster", "GPU Operator v26.7.2+ with GPUCluster", s2, d2))

    mig_nodes = [n for n in nodes if n.labels.get("nvidia.com/mig.config") not in (None, "", "all-disabled")]
    mig_workloads = [w for w in workloads if any(r.is_mig for r in w.requests)]
    states = {n.name: n.labels.get("nvidia.com/mig.config.state", "") for n in mig_nodes}
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
    models = gpu_models(recs)
    d5 = f"{len(moved)} of {len(by_ns)} namespaces run on claims only"
    if len(models) > 1:
        d5 += f"; cluster mixes {len(models)} GPU models: add selectors where hardware differs"
    steps.append(Step(5, "move_services", "Move workloads service by service, selectors where hardware differs",
                      s5, d5, (len(moved), len(by_ns))))
    return steps


# --- entry point -------------------------------------------------------------------------------


def _plan_workload(
    raw: dict[str, Any] | None, w: Workload, models: list[GpuModel], used_names: set[tuple[str, str]], schema: str
) -> WorkloadPlan:
    notes: list[str] = []
    errors = [f"{w.ref}: {r.error}" for r in w.requests if r.error]
    if w.owner:
        notes.append(f"managed by {w.owner}: change the owner's spec, or it will undo this patch")
    if raw is None and w.requests and not errors:
        errors.append(f"{w.ref}: the object itself is not available, so it cannot be patched")
    if errors or not w.requests or raw is None:
        return WorkloadPlan(w, None, None, None, (), tuple(notes), tuple(errors))
    ns = w.ref.namespace or "default"
    name = dns_label(f"{w.ref.name}-gpu", 253)
    if (ns, name) in used_names:
        name = dns_label(f"{w.ref.name}-{w.ref.kind}-gpu", 253)
    used_names.add((ns, name))
    claim = "gpu"
    while claim in w.claim_names:
        claim += "-dra"

    selectors: list[SelectorProposal] = []
    selector = None
    by_product = {p: m for m in models for p in (m.product, *m.aliases)}
    if w.pinned_products and len(models) > 1 and any(not r.is_mig for r in w.requests):
        chosen = list({id(m): m for m in (by_product.get(p) or GpuModel(p, None, None, ()) for p in w.pinned_products)}.values())
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

    layout, use = requests_layout(w)
    template = claim_template(w, name, layout, selector)
    patched, pnotes = patched_workload(raw, w, name, claim, use)
    stopgap = stopgap_workload(raw, w) if any(r.resource == GPU_RESOURCE for r in w.requests) else None
    notes.extend(pnotes)

    generated: dict[str, GeneratedObject | None] = {
        "template": GeneratedObject("claim_template", ns, template, w.ref),
        "patched": GeneratedObject("workload", ns, patched, w.ref),
        "stopgap": GeneratedObject("stopgap_workload", ns, stopgap, w.ref) if stopgap else None,
    }
    for key, g in list(generated.items()):
        if g is None or (key == "patched" and generated["template"] is None):
            continue  # a workload whose template is refused is not offered: no need to check it
        errs = validate_object(g.obj, schema)
        if errs:
            errors.extend(f"{w.ref}: generated {g.ref.kind} {g.ref.name} is not valid for Kubernetes {schema}: {e}" for e in errs)
            generated[key] = None
    if generated["template"] is None or generated["patched"] is None:
        # A workload without its template (or vice versa) would not schedule: offer neither.
        generated["template"] = generated["patched"] = None
    return WorkloadPlan(w, generated["template"], generated["patched"], generated["stopgap"],
                        tuple(selectors), tuple(notes), tuple(errors))


def plan_migration(
    objects: Iterable[dict[str, Any] | KubeRecord], server_version: str | None, target_version: str = "1.36"
) -> MigrationPlan:
    """Plan the move of the cluster's device-plugin GPU workloads to DRA.

    ``objects``: raw Kubernetes objects of the cluster (any kinds), parsed here
    (``inventory.records``); the raw workloads are what the patched copies are made from.
    ``server_version``: the cluster's Kubernetes version (``"v1.33.5"``, ``"1.35"``), None
    when unknown. ``target_version``: the Kubernetes version of the DRA cluster the objects
    are generated and validated for. Raises ``ValueError`` only when ``target_version`` is
    unreadable; everything else wrong is reported in ``errors`` and ``findings``.
    """
    recs: list[KubeRecord] = []
    raw_of: dict[ObjectRef, dict[str, Any]] = {}
    for obj in objects:
        for r in records.as_records((obj,), [], skip_unknown_versions=True, keep_unknown=True):
            recs.append(r)
            if isinstance(obj, dict):
                raw_of[r.ref] = obj
    return plan_records(recs, server_version, target_version, raw_of.get)


def plan_records(
    recs: Sequence[KubeRecord],
    server_version: str | None,
    target_version: str = "1.36",
    raw_of: Callable[[ObjectRef], dict[str, Any] | None] | None = None,
) -> MigrationPlan:
    """``plan_migration`` over parsed records. ``raw_of``: a workload's raw object (by ref),
    which its patched copy and stop-gap are made from; a workload whose raw object it cannot
    give is reported in ``errors`` and gets no generated objects. Other kinds' records may be
    identity-only (``records.parse_identity``): they count as present owners."""
    schema, schema_note = schema_version_for(target_version)
    errors: list[str] = []
    findings: list[b.Finding] = []
    target = parse_version(target_version)
    if target is not None and target[:2] < MIN_TARGET:
        errors.append(f"target Kubernetes {target_version} does not serve resource.k8s.io/v1 (GA in 1.34)")
    if schema_note:
        findings.append(b.Finding("schema_version", b.INFO, schema_note))

    workloads = scan_workloads(recs)
    models = gpu_models(recs)
    used: set[tuple[str, str]] = set()
    plans = [
        _plan_workload(raw_of(w.ref) if raw_of else None, w, models, used, schema)
        for w in workloads if w.uses_device_plugin
    ]
    for p in plans:
        errors.extend(p.errors)
        if p.workload.owner:
            findings.append(b.Finding("workload_managed_by_owner", b.WARNING,
                                      f"{p.workload.ref} is managed by {p.workload.owner}; the patch must go "
                                      "into the owner's spec.", (p.workload.ref,)))
    orphans = orphan_gpu_pods(recs)
    for orphan in (o for o in orphans if o.uses_device_plugin):
        findings.append(b.Finding("controller_not_in_snapshot", b.WARNING,
                                  f"{orphan.ref} asks for GPUs and is managed by {orphan.owner}, which is not "
                                  "in the snapshot: translate its controller.", (orphan.ref,)))

    keep_classes, keep_notes = keep_name_classes([p.workload for p in plans], recs)
    cluster_objs: list[GeneratedObject] = []
    for dc in keep_classes:
        errs = validate_object(dc.obj, schema)
        if errs:
            errors.extend(f"generated DeviceClass {dc.ref.name} is not valid for Kubernetes {schema}: {e}" for e in errs)
        else:
            cluster_objs.append(dc)
    for note in keep_notes:
        findings.append(b.Finding("extended_resource_already_mapped", b.INFO, note))

    generated: list[GeneratedObject] = []
    for p in plans:
        generated.extend(g for g in (p.template, p.patched, p.stopgap) if g is not None)
    generated.extend(cluster_objs)

    device_classes = {c for g in generated if g.purpose == "claim_template" for c in g.request_classes}
    # Gate -> (why, severity when off). The stop-gap and DynamicMIG are optional paths.
    needs: dict[str, tuple[str, str]] = {}
    if plans:
        needs["DRAExtendedResource"] = ("the extended-resource stop-gap", b.WARNING)
    if MIG_CLASS in device_classes:
        needs["DRAPartitionableDevices"] = ("DynamicMIG (static MIG does not need it)", b.WARNING)
    sharing = b.check_sharing(recs)
    if sharing:
        needs["DRAConsumableCapacity"] = ("ConsumableShares, the DRA form of per-pod GPU sharing", b.BLOCKER)

    findings.extend(b.check_priority_preemption(recs, workloads))
    findings.extend(sharing)
    findings.extend(b.check_versions(recs, server_version, target_version, needs))
    findings.extend(b.check_allocation_path(recs))
    findings.extend(b.check_kueue(recs, device_classes or {GPU_CLASS}))
    findings.extend(b.check_serving_layers(recs))
    findings.extend(b.check_mig_layout(recs, workloads))
    findings.extend(b.check_mig_single_strategy(recs, workloads))
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
        steps=tuple(migration_steps(recs, server_version, workloads + orphans, plans, target_version)),
        errors=tuple(errors),
    )
