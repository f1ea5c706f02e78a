"""Rules for claims and pods stuck before allocation.

Pure: no Django. Categories: device_class_missing, no_matching_device, capacity_exhausted,
constraint_unsatisfiable, claim_not_found, template_claim_missing, feature_gate_disabled,
scheduler_known_bug. The allocation verdicts come from ``feasibility.assess_claim``: the
scheduler's event (``cannot allocate all claims``) is the same for all three look-alikes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from claims.diagnosis.context import Context, claim_ref, earliest, minutes, node_ref, pod_ref, slice_ref
from claims.diagnosis.feasibility import ClaimFeasibility
from claims.diagnosis.known_issues import issues_for
from claims.diagnosis.rules_node import driver_gaps, node_could_satisfy
from claims.diagnosis.state import ComponentInfo
from claims.diagnosis.verdicts import Verdict, renders
from inventory.cel import evaluate_device
from inventory.kube import ObjectRef
from inventory.records import Pod, ResourceClaim

_VERDICT_CATEGORY = {
    "device_class_missing": "device_class_missing",
    "no_matching_device": "no_matching_device",
    "capacity_exhausted": "capacity_exhausted",
    "constraint_unsatisfiable": "constraint_unsatisfiable",
    "capacity_fragmented": "capacity_fragmented",
}


def _vendor(name: str) -> str:
    """``gpu.nvidia.com`` -> ``nvidia.com``: the domain a DeviceClass's driver family shares."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else name


def _gap_nodes_could_match(ctx: Context, feas: ClaimFeasibility, gaps: Mapping[str, str]) -> bool:
    """Could a GPU on a node whose driver publishes nothing satisfy the claim's requests?
    (``rules_node.node_could_satisfy`` for each such node.)"""
    return any(node_could_satisfy(ctx, feas, node_name) for node_name in gaps)


# A finding names at most this many slices (the evidence counts them all): on a large fleet
# every slice matches a plain "one GPU" request, and a finding naming 5,000 objects helps no one.
SLICES_LISTED = 20
NODES_LISTED = 20


def rule_allocation(ctx: Context) -> Iterator[Verdict]:
    """device_class_missing / no_matching_device / capacity_exhausted / constraint_unsatisfiable."""
    state = ctx.state
    gaps = driver_gaps(ctx)
    for claim, pods in ctx.pending_claims():
        since = ctx.pending_since(claim, pods)
        if not ctx.older_than(since, ctx.thresholds.pending_seconds):
            continue
        feas = ctx.feasibility(claim)
        category = _VERDICT_CATEGORY.get(feas.verdict)
        if category is None:
            continue
        if category == "no_matching_device" and any(r.errors for r in feas.requests if not r.matching):
            # A selector failed at run time: the scheduler aborts the allocation on that error,
            # so selector_invalid owns the claim, not "nothing matches".
            continue
        if (
            category == "no_matching_device"
            and gaps
            and not any(r.matching for r in feas.requests)
            and _gap_nodes_could_match(ctx, feas, gaps)
        ):
            # A node's driver publishes nothing and its GPUs might match: the driver finding owns this claim.
            continue
        objs = [claim_ref(claim), *(pod_ref(p) for p in pods)]
        tmpl = ctx.template_ref_for(claim, pods)
        if tmpl:
            objs.append(tmpl)
        if category == "capacity_fragmented":
            yield _fragmented(ctx, claim, pods, feas, objs, since)
            continue
        absent: list[dict[str, object]] = []
        slices = sorted(
            {state.devices[k].slice_name for r in feas.requests for k in r.matching}
        )
        facts: dict[str, Any] = {}
        if category == "device_class_missing":
            missing = sorted({r.device_class or "?" for r in feas.requests if not r.class_exists})
            for m in missing:
                absent.append(ObjectRef("DeviceClass", None, m).to_dict())
                objs.append(ObjectRef("DeviceClass", None, m))
            vendors = {_vendor(m) for m in missing}
            related = sorted(s.name for s in state.slices if _vendor(s.driver) in vendors)
            objs.extend(slice_ref(s) for s in related)
            facts = {"missing_classes": missing, "classes_present": sorted(state.device_classes)}
        elif category == "no_matching_device":
            classes = sorted({r.device_class or "?" for r in feas.requests})
            objs.extend(ObjectRef("DeviceClass", None, c) for c in classes)
            class_slices = ctx.slices_with_class_devices(tuple(classes), lambda c, d: _class_matches(ctx, c, d))
            objs.extend(slice_ref(s) for s in (class_slices or slices)[:SLICES_LISTED])
            facts = {"devices_published": len(state.devices)}
        elif category == "capacity_exhausted":
            objs.extend(slice_ref(s) for s in slices[:SLICES_LISTED])
            facts = {"holders": sorted(
                {f"{c.namespace}/{c.name}" for r in feas.requests for k in r.matching for c in ctx.used.get(k, [])}
            )}
        else:
            objs.extend(slice_ref(s) for s in slices[:SLICES_LISTED])
        yield Verdict(
            category=category,
            severity="critical" if category in ("device_class_missing", "no_matching_device") else "warning",
            objects=tuple(objs),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=since,
            facts={
                "verdict": feas.verdict,
                "detail": feas.detail,
                "pending_seconds": ctx.age(since),
                "requests": [
                    {
                        "name": r.name,
                        "device_class": r.device_class,
                        "count": r.count,
                        "matching": len(r.matching),
                        "free": len(r.free),
                        "tainted": len(r.tainted),
                        "selectors": list(r.selectors),
                        "errors": list(r.errors),
                    }
                    for r in feas.requests
                ],
                "absent": absent,
                "slices_with_matching_devices": len(slices),
                "scheduling_events": ctx.scheduling_messages(pods),
                **facts,
            },
        )


def _who_and_wait(v: Verdict) -> tuple[str, str]:
    main = v.objects[0]
    age = v.facts.get("pending_seconds")
    return f"{main.namespace}/{main.name}", (f", pending {minutes(age)}" if age is not None else "")


@renders("device_class_missing")
def _render_device_class_missing(v: Verdict) -> tuple[str, str]:
    who, pending_txt = _who_and_wait(v)
    missing = v.facts["missing_classes"]
    summary = (
        f"Claim {who} requests DeviceClass {', '.join(missing)}, which does not exist"
        f" (classes present: {', '.join(v.facts['classes_present']) or 'none'}){pending_txt}."
    )
    action = (
        f"Install or re-configure the DRA driver so it creates DeviceClass {missing[0]}"
        " (or fix the class name in the claim or template), then re-create the pod."
    )
    return summary, action


@renders("no_matching_device")
def _render_no_matching_device(v: Verdict) -> tuple[str, str]:
    who, pending_txt = _who_and_wait(v)
    sel = "; ".join(s for r in v.facts["requests"] for s in r["selectors"])
    summary = (
        f"Claim {who}: {v.facts['detail']}; {v.facts['devices_published']} devices published, none"
        f" satisfies {('selector ' + sel.strip()) if sel else 'the request'}{pending_txt}."
    )
    action = (
        "Change the request's selector (or DeviceClass) to values the published devices"
        " have, or add nodes whose devices match; no device in the cluster can satisfy it now."
    )
    return summary, action


@renders("capacity_exhausted")
def _render_capacity_exhausted(v: Verdict) -> tuple[str, str]:
    who, pending_txt = _who_and_wait(v)
    summary = (
        f"Claim {who}: every matching device is allocated ({v.facts['detail']});"
        f" held by {len(v.facts['holders'])} other claim(s){pending_txt}."
    )
    action = (
        "Wait for or stop workloads holding matching devices, or add capacity; DRA devices"
        " are not preempted, so raising the pod's priority will not free one."
    )
    return summary, action


@renders("constraint_unsatisfiable")
def _render_constraint_unsatisfiable(v: Verdict) -> tuple[str, str]:
    who, pending_txt = _who_and_wait(v)
    action = (
        "Free devices that satisfy the constraint together (e.g. two instances on one"
        " parent GPU), or relax the matchAttribute/distinctAttribute constraint."
    )
    return f"Claim {who}: {v.facts['detail']}{pending_txt}.", action


def _fragmented(ctx: Context, claim: ResourceClaim, pods: list[Pod], feas: ClaimFeasibility,
                objs: list[ObjectRef], since: str | None) -> Verdict:
    """The capacity_fragmented verdict: free matching devices per node vs what the claim
    needs on one node."""
    state = ctx.state
    free_per_node: dict[str, dict[str, int]] = feas.evidence.get("free_per_node", {})
    # Most free first; a finding names at most NODES_LISTED of them (a large fleet has a
    # free device on every node: 1,000 names help no one and cost every write of the finding).
    key = ("nodes_by_free", id(free_per_node))  # claims of one request shape share the map
    if key not in ctx.memo:
        ctx.memo[key] = (free_per_node, sorted((n for n, v in free_per_node.items() if any(v.values())),
                                               key=lambda n: (-sum(free_per_node[n].values()), n)))
    ranked = ctx.memo[key][1]  # the map is kept with it, so its id is never reused in this run
    listed = ranked[:NODES_LISTED]
    objs = [*objs, *(node_ref(n) for n in listed if n in state.nodes)]
    uids = [claim.uid, *(p.uid for p in pods)]
    return Verdict(
        category="capacity_fragmented",
        severity="warning",
        objects=tuple(dict.fromkeys(objs)),
        uids=tuple(uids),
        since=since,
        facts={
            "subcategory": feas.evidence.get("subcategory"),
            "detail": feas.detail,
            "pending_seconds": ctx.age(since),
            "requests": [
                {"name": r.name, "device_class": r.device_class, "count": r.count,
                 "matching": len(r.matching), "free": len(r.free)}
                for r in feas.requests
            ],
            "free_per_node": {n: free_per_node[n] for n in listed},
            "nodes_with_free": len(ranked),
            "largest_free_on_one_node": max(
                (sum(v.values()) for v in free_per_node.values()), default=0
            ),
            "scheduling_events": ctx.scheduling_messages(pods),
        },
    )


@renders("capacity_fragmented")
def _render_fragmented(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    need = ", ".join(
        f"{r['count'] if r['count'] is not None else 'all'} x {r['device_class']}" for r in f["requests"]
    )
    spread = ", ".join(f"{n}: {sum(c.values())}" for n, c in list(f["free_per_node"].items())[:8])
    pending = f", pending {minutes(f['pending_seconds'])}" if f.get("pending_seconds") is not None else ""
    summary = (
        f"Claim {main.namespace}/{main.name} needs {need} on one node; {f['detail']}"
        f" (free per node, most first: {spread or 'none'}"
        f"{'' if f.get('nodes_with_free', 0) <= 8 else ', ... ' + str(f['nodes_with_free']) + ' nodes with free devices'};"
        f" at most {f['largest_free_on_one_node']} on one node){pending}."
    )
    if f.get("subcategory") == "no_node_large_enough":
        action = (
            "No node has that many matching devices: lower the request's count (or split it across"
            " pods, e.g. with a ComputeDomain for multi-node jobs) or add a node large enough."
        )
    else:
        action = (
            "Free matching devices on one node (drain or move the smaller workloads holding them there,"
            " or gang-schedule with Kueue topology-aware placement), or lower the count; waiting"
            " only helps when a whole node's worth of devices is released."
        )
    return summary, action


def _class_matches(ctx: Context, class_name: str, device: object) -> bool:
    from inventory.cel import SelectorError

    dc = ctx.state.device_classes.get(class_name)
    if dc is None:
        return False
    try:
        return evaluate_device(device, dc.selectors).matched  # type: ignore[arg-type]
    except SelectorError:
        return False


def rule_claim_references(ctx: Context) -> Iterator[Verdict]:
    """claim_not_found and template_claim_missing: a pod's reference leads nowhere."""
    state = ctx.state
    for pod in ctx.each_pod():
        if pod.terminal or pod.deletion_timestamp:
            continue
        for ref, resolved in state.pod_claim_names(pod):
            if ref.claim_name and (pod.namespace, ref.claim_name) not in state.claims:
                since = earliest([pod.created, *(e.first for e in state.events_for("Pod", pod.namespace, pod.name))])
                if not ctx.older_than(since, ctx.thresholds.pending_seconds):
                    continue
                elsewhere = sorted(
                    ns for (ns, name) in state.claims if name == ref.claim_name and ns != pod.namespace
                )
                missing = ObjectRef("ResourceClaim", pod.namespace, ref.claim_name)
                yield Verdict(
                    category="claim_not_found",
                    severity="critical",
                    objects=(
                        pod_ref(pod),
                        missing,
                        *(ObjectRef("ResourceClaim", ns, ref.claim_name) for ns in elsewhere),
                    ),
                    uids=(pod.uid, "", *(state.claims[(ns, ref.claim_name)].uid for ns in elsewhere)),
                    since=since,
                    facts={"absent": [missing.to_dict()], "same_name_in": elsewhere, "claim": ref.claim_name},
                )
            elif ref.template_name and resolved is None:
                tmpl_missing = (pod.namespace, ref.template_name) not in state.templates
                events = [
                    e for e in state.events_for("Pod", pod.namespace, pod.name)
                    if e.reason == "FailedResourceClaimCreation"
                ]
                if not tmpl_missing and not events:
                    continue
                since = earliest([pod.created, *(e.first for e in events)])
                if not ctx.older_than(since, ctx.thresholds.pending_seconds) and not events:
                    continue
                tref = ObjectRef("ResourceClaimTemplate", pod.namespace, ref.template_name)
                yield Verdict(
                    category="template_claim_missing",
                    severity="critical",
                    objects=(pod_ref(pod), tref),
                    uids=(pod.uid, ""),
                    since=since,
                    facts={
                        "absent": [tref.to_dict()] if tmpl_missing else [],
                        "events": [e.message for e in events][:3],
                        "event_count": sum(e.count for e in events),
                        "template_missing": tmpl_missing,
                        "template": ref.template_name,
                        "entry": ref.name,
                    },
                )


@renders("claim_not_found")
def _render_claim_not_found(v: Verdict) -> tuple[str, str]:
    f = v.facts
    pod = v.objects[0]
    elsewhere = f["same_name_in"]
    note = (
        f"; a claim of that name exists only in namespace(s) {', '.join(elsewhere)},"
        " and claims are namespaced" if elsewhere else ""
    )
    summary = (
        f"Pod {pod.namespace}/{pod.name} references ResourceClaim {f['claim']},"
        f" which does not exist in namespace {pod.namespace}{note}."
    )
    action = (
        f"Create ResourceClaim {f['claim']} in namespace {pod.namespace} or point"
        " the workload at a ResourceClaimTemplate; a pod cannot use another"
        " namespace's claim."
    )
    return summary, action


@renders("template_claim_missing")
def _render_template_claim_missing(v: Verdict) -> tuple[str, str]:
    f = v.facts
    pod = v.objects[0]
    why = (
        f"ResourceClaimTemplate {f['template']} does not exist in {pod.namespace}"
        if f["template_missing"]
        else f"the claim controller failed to create it ({f['events'][0]})"
    )
    summary = (
        f"Pod {pod.namespace}/{pod.name} entry {f['entry']} has no ResourceClaim: {why}"
        + (f"; FailedResourceClaimCreation x{f['event_count']}" if f["events"] else "")
        + "."
    )
    action = (
        f"Re-create ResourceClaimTemplate {f['template']} in {pod.namespace} (or"
        " point the pod at an existing template) so the controller can create the claim."
    )
    return summary, action


# Feature gates the DRA features need, with the first minor version where each is on by
# default (None: never assumed on; only an explicit "=false" is reported). Sources: Kubernetes
# feature-gate docs; domain brief (DRAExtendedResource, DRAConsumableCapacity,
# DRAPartitionableDevices on by default from 1.36); DRADeviceTaints default-on since 1.36
# (kubernetes#141290); DRAPrioritizedList beta (on) in 1.34.
GATE_DEFAULT_ON: dict[str, tuple[int, int] | None] = {
    "DynamicResourceAllocation": (1, 34),
    "DRAPrioritizedList": (1, 34),
    "DRAPartitionableDevices": (1, 36),
    "DRAConsumableCapacity": (1, 36),
    "DRAExtendedResource": (1, 36),
    "DRADeviceTaints": (1, 36),
}


def gate_enabled(comp: ComponentInfo, gate: str) -> bool | None:
    """Explicit flag, else the version's default; None when neither is known."""
    if gate in comp.feature_gates:
        return comp.feature_gates[gate]
    first_on = GATE_DEFAULT_ON.get(gate)
    if comp.version is None or first_on is None:
        return None
    return comp.version[:2] >= first_on


def _features_in_use(ctx: Context) -> dict[str, list[ObjectRef]]:
    state = ctx.state
    used: dict[str, list[ObjectRef]] = {}

    def add(g: str, ref: ObjectRef) -> None:
        used.setdefault(g, []).append(ref)

    for c in state.claims.values():
        if not c.allocated and not c.deletion_timestamp:
            add("DynamicResourceAllocation", claim_ref(c))
        for r in c.requests:
            if r.first_available is not None:
                add("DRAPrioritizedList", claim_ref(c))
            if r.exactly is not None and r.exactly.capacity:
                add("DRAConsumableCapacity", claim_ref(c))
            if r.exactly is not None and r.exactly.tolerations:
                add("DRADeviceTaints", claim_ref(c))
    for s in state.slices:
        if s.shared_counters or any(d.consumes_counters for d in s.devices):
            add("DRAPartitionableDevices", slice_ref(s.name))
        if any(d.taints for d in s.devices):
            add("DRADeviceTaints", slice_ref(s.name))
    for dc in state.device_classes.values():
        if dc.extended_resource_name:
            add("DRAExtendedResource", ObjectRef("DeviceClass", None, dc.name))
    for r in state.taint_rules:
        add("DRADeviceTaints", ObjectRef("DeviceTaintRule", None, r.name))
    return used


# Which components must have each gate for the feature to work end to end.
_GATE_COMPONENTS = {
    "DynamicResourceAllocation": ("kube-apiserver", "kube-scheduler", "kube-controller-manager"),
    "DRAPrioritizedList": ("kube-apiserver", "kube-scheduler"),
    "DRAPartitionableDevices": ("kube-apiserver", "kube-scheduler"),
    "DRAConsumableCapacity": ("kube-apiserver", "kube-scheduler"),
    "DRAExtendedResource": ("kube-apiserver", "kube-scheduler"),
    "DRADeviceTaints": ("kube-apiserver", "kube-scheduler", "kube-controller-manager"),
}


def rule_feature_gates(ctx: Context) -> Iterator[Verdict]:
    """feature_gate_disabled: a feature in use is off on a control-plane component."""
    state = ctx.state
    if not state.components:
        return
    for gate, refs in sorted(_features_in_use(ctx).items()):
        off = []
        for comp_name in _GATE_COMPONENTS[gate]:
            comp = state.components.get(comp_name)
            if comp is not None and gate_enabled(comp, gate) is False:
                off.append(comp)
        if not off:
            continue
        on = [
            c.component for c in state.components.values()
            if c.component in _GATE_COMPONENTS[gate] and gate_enabled(c, gate)
        ]
        # Pods bound to a node although their claim was never allocated: the scheduler
        # ignored the claims.
        bound = []
        for c in state.claims.values():
            if c.allocated:
                continue
            for p in state.pods_using_claim(c):
                if p.node_name and not p.terminal:
                    bound.append(p)
        claim_refs = [r for r in refs if r.kind == "ResourceClaim"]
        objs = [*(pod_ref(p) for p in bound), *claim_refs,
                *(ObjectRef("Pod", c.pod_namespace, c.pod_name) for c in off),
                *(ObjectRef("Pod", state.components[n].pod_namespace, state.components[n].pod_name) for n in on),
                *(r for r in refs if r.kind != "ResourceClaim")]
        yield Verdict(
            category="feature_gate_disabled",
            severity="critical",
            objects=tuple(dict.fromkeys(objs)),
            uids=tuple(p.uid for p in bound),
            since=earliest([p.created for p in bound]) if bound else None,
            facts={
                "gate": gate,
                "disabled_on": [c.component for c in off],
                "disabled_versions": [".".join(map(str, c.version)) if c.version else "?" for c in off],
                "enabled_on": sorted(on),
                "objects_using": len(refs),
                "bound_without_allocation": [f"{p.namespace}/{p.name}" for p in bound],
            },
        )


@renders("feature_gate_disabled")
def _render_feature_gate_disabled(v: Verdict) -> tuple[str, str]:
    f = v.facts
    names = ", ".join(f"{c} (v{ver})" for c, ver in zip(f["disabled_on"], f["disabled_versions"], strict=True))
    bound = f["bound_without_allocation"]
    summary = (
        f"Feature gate {f['gate']} is off on {names}"
        + (f" but on in {', '.join(f['enabled_on'])}" if f["enabled_on"] else "")
        + f"; {f['objects_using']} object(s) use it"
        + (f"; {len(bound)} pod(s) were bound without their claim being allocated" if bound else "")
        + "."
    )
    action = (
        f"Enable {f['gate']} on {', '.join(f['disabled_on'])} to match the rest of the"
        " control plane and kubelets, then re-create the affected pods."
    )
    return summary, action


def rule_scheduler_known_bug(ctx: Context) -> Iterator[Verdict]:
    """scheduler_known_bug: scheduler version in a known bug's range and its symptom seen."""
    state = ctx.state
    sched = state.components.get("kube-scheduler")
    if sched is None:
        return
    issues = [i for i in issues_for("kube-scheduler", sched.version)
              if i.category == "scheduler_known_bug"]
    if not issues:
        return
    for issue in issues:
        if issue.state == "claim_allocatable_while_pending":
            yield from rule_known_bug_state(ctx, issue, sched)
            continue
        if not issue.event_contains:
            continue
        hits = [
            e for e in state.events
            if e.involved_kind == "Pod" and e.reason == "FailedScheduling" and issue.matches_message(e.message)
        ]
        pods = []
        for e in hits:
            p = state.pods.get((e.involved_namespace or "", e.involved_name or ""))
            if p is not None and not p.node_name and not p.terminal:
                pods.append((p, e))
        for p, e in pods:
            claims = [
                ObjectRef("ResourceClaim", p.namespace, n)
                for _, n in state.pod_claim_names(p) if n
            ]
            yield Verdict(
                category="scheduler_known_bug",
                severity="critical",
                objects=(pod_ref(p), *claims, ObjectRef("Pod", sched.pod_namespace, sched.pod_name)),
                uids=(p.uid,),
                since=e.first,
                facts={**_issue_facts(issue, sched), "symptom": "event", "message": e.message[:300],
                       "pod": f"{p.namespace}/{p.name}"},
            )


def _issue_facts(issue: Any, sched: ComponentInfo) -> dict[str, Any]:
    return {"known_issue": issue.id, "link": issue.link, "fixed_in": issue.fixed_in,
            "explanation": issue.summary, "workaround": issue.workaround,
            "scheduler_version": ".".join(map(str, sched.version or ()))}


@renders("scheduler_known_bug")
def _render_scheduler_known_bug(v: Verdict) -> tuple[str, str]:
    f = v.facts
    bug = (f"kube-scheduler v{f['scheduler_version']}: known bug {f['known_issue']}, fixed in {f['fixed_in']}")
    if f["symptom"] == "event":
        summary = f"Pod {f['pod']} fails scheduling with '{f['message'][:160]}' on {bug}."
    else:
        main = v.objects[0]
        age = f["pending_seconds"]
        events = f["scheduling_events"]
        summary = (
            f"Claim {main.namespace}/{main.name} has been pending" + (f" {minutes(age)}" if age is not None else "")
            + f" although it is allocatable now ({f['feasibility']}), on {bug}"
            + (f"; scheduler says '{events[-1]['message'][:160]}'" if events else "") + "."
        )
    action = (
        f"Upgrade kube-scheduler to {f['fixed_in']} or later ({f['link']})"
        + (f"; until then {f['workaround']}" if f["workaround"] else "") + "."
    )
    return summary, action


def waiting_on_binding(ctx: Context, claim: ResourceClaim) -> tuple[str, list[tuple[Any, str]], list[tuple[Any, Any]]]:
    """Where an allocated claim stands on its devices' binding conditions: (state, pending,
    failed). ``state``: ``none`` (no binding conditions, or all met), ``waiting`` (some not
    yet True, allocated less than ``binding_timeout_seconds`` ago: the scheduler is still
    waiting in PreBind, the claim is not stuck), ``timed_out`` or ``failed`` (a
    ``bindingFailureConditions`` condition is True). Sources: allocation results'
    ``bindingConditions`` / ``bindingFailureConditions``, ``status.devices[].conditions``,
    ``allocationTimestamp``."""
    if not claim.allocated:
        return "none", [], []
    failed = list(claim.binding_failed)
    pending = list(claim.binding_conditions_pending)
    if failed:
        return "failed", pending, failed
    if not pending:
        return "none", [], []
    if ctx.older_than(claim.allocation_timestamp, ctx.thresholds.binding_timeout_seconds):
        return "timed_out", pending, []
    return "waiting", pending, []


def rule_binding_conditions(ctx: Context) -> Iterator[Verdict]:
    """binding_failed: a claim allocated with binding conditions that failed, or that did not
    all become True within the binding timeout, while a pod waits for it unbound."""
    state = ctx.state
    for claim in ctx.each_claim():
        if claim.deletion_timestamp:
            continue
        status, pending, failed = waiting_on_binding(ctx, claim)
        if status not in ("failed", "timed_out"):
            continue
        pods = [p for p in state.pods_using_claim(claim) if not p.terminal and not p.deletion_timestamp]
        if not pods or all(p.node_name for p in pods):
            continue  # bound: the conditions no longer hold the pod
        objs = [claim_ref(claim), *(pod_ref(p) for p in pods)]
        devices = sorted({f"{r.driver}/{r.pool}/{r.device}" for r, _ in [*pending, *failed]})
        slices = sorted({state.devices[r.device_key].slice_name for r, _ in [*pending, *failed]
                         if r.device_key in state.devices})
        objs.extend(slice_ref(s) for s in slices)
        since = claim.allocation_timestamp
        if failed:
            since = earliest([c.last_transition_time for _, c in failed]) or since
        yield Verdict(
            category="binding_failed",
            severity="critical",
            objects=tuple(dict.fromkeys(objs)),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=since,
            facts={
                "subcategory": "failure_condition" if failed else "binding_timeout",
                "devices": devices,
                "pending_conditions": sorted({ctype for _, ctype in pending}),
                "failed_conditions": [
                    {"device": f"{r.driver}/{r.pool}/{r.device}", "type": c.type, "reason": c.reason,
                     "message": (c.message or "")[:200]}
                    for r, c in failed
                ],
                "allocated_seconds": ctx.age(claim.allocation_timestamp),
                "binding_timeout_seconds": ctx.thresholds.binding_timeout_seconds,
                "scheduling_events": ctx.scheduling_messages(pods),
            },
        )


@renders("binding_failed")
def _render_binding_failed(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    if f["failed_conditions"]:
        c = f["failed_conditions"][0]
        why = (f"binding failure condition {c['type']} is True on {c['device']}"
               + (f" ({c['reason']}: {c['message']})" if c["reason"] or c["message"] else ""))
    else:
        age = f["allocated_seconds"]
        why = (f"binding condition(s) {', '.join(f['pending_conditions'])} of {', '.join(f['devices'][:4])} not"
               f" True {minutes(age) if age is not None else 'long'} after allocation (timeout"
               f" {minutes(f['binding_timeout_seconds'])})")
    summary = f"Claim {main.namespace}/{main.name} is allocated but its pod is not bound: {why}."
    action = (
        "Check the controller that prepares these devices (the one that sets the binding conditions in the"
        " claim's status.devices) and its events; the scheduler clears the allocation and retries, so fix"
        " the attach or preparation failure rather than the claim."
    )
    return summary, action


def rule_known_bug_state(ctx: Context, issue: Any, sched: ComponentInfo) -> Iterator[Verdict]:
    """The structural symptom ``claim_allocatable_while_pending``: a claim pending past its
    threshold that the devices published now could satisfy (``feasibility`` says
    ``feasible``), on an affected kube-scheduler."""
    for claim, pods in ctx.pending_claims():
        since = ctx.pending_since(claim, pods)
        if not ctx.older_than(since, ctx.thresholds.pending_seconds):
            continue
        feas = ctx.feasibility(claim)
        if feas.verdict != "feasible":
            continue
        yield Verdict(
            category="scheduler_known_bug",
            severity="critical",
            objects=(claim_ref(claim), *(pod_ref(p) for p in pods),
                     ObjectRef("Pod", sched.pod_namespace, sched.pod_name)),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=since,
            facts={**_issue_facts(issue, sched), "symptom": "state", "feasibility": feas.detail,
                   "pending_seconds": ctx.age(since), "scheduling_events": ctx.scheduling_messages(pods)},
        )
