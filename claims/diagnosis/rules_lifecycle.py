"""Rules for claims after allocation: allocated_not_reserved, reserved_for_missing_pod,
claim_stuck_deallocating.

Pure: no Django. Rules yield ``Verdict``s; one renderer per category writes the text. Evidence: ``status.allocation`` (``allocationTimestamp``, ``nodeSelector``),
``status.reservedFor[].uid`` against existing pods, ``metadata.deletionTimestamp`` and
``metadata.finalizers``.
"""

from __future__ import annotations

from collections.abc import Iterator

from claims.diagnosis.context import Context, claim_ref, minutes, node_ref, pod_ref
from claims.diagnosis.verdicts import Verdict, renders
from inventory.kube import ObjectRef, parse_time
from inventory.records import Node, Pod


def _rejecting_nodes(ctx: Context, pod: Pod) -> list[Node]:
    """Nodes that refuse the pod before DRA is considered: cordoned or untolerated taint.
    Once per set of tolerations and diagnosis: it is all the pod's own facts it reads, and a
    fleet's pending pods share a few (each scanned every node: 2,600 pods x 5,000 nodes)."""
    key = ("rejecting_nodes", pod.tolerations)
    if key not in ctx.memo:
        ctx.memo[key] = _scan_rejecting(ctx, pod)
    return list(ctx.memo[key])


def _scan_rejecting(ctx: Context, pod: Pod) -> list[Node]:
    out = []
    for node in ctx.state.nodes.values():
        if node.unschedulable:
            out.append(node)
            continue
        for t in node.taints:
            if t.keeps_off and not any(tol.tolerates(t) for tol in pod.tolerations):
                out.append(node)
                break
    return out


def rule_allocated_not_reserved(ctx: Context) -> Iterator[Verdict]:
    state = ctx.state
    for c in ctx.each_claim():
        if not c.allocated or c.reserved_for or c.deletion_timestamp:
            continue
        # An allocationTimestamp that is no time (a hand-edited file) counts as absent, as on
        # servers older than the field: else the claim would never be old enough to report.
        since = c.allocation_timestamp if parse_time(c.allocation_timestamp) else c.created
        if not ctx.older_than(since, ctx.thresholds.allocated_not_reserved_seconds):
            continue
        alloc_nodes = list(c.allocation_nodes)
        pods = [p for p in state.pods_using_claim(c) if not p.terminal]
        owner_gone = bool(c.owner_pod_uid) and c.owner_pod_uid not in state.pods_by_uid()
        rejecting: list[Node] = []
        for p in pods:
            if not p.node_name:
                rejecting.extend(_rejecting_nodes(ctx, p))
        node_names = list(dict.fromkeys(alloc_nodes + [n.name for n in rejecting]))
        cordoned = [n for n in alloc_nodes if state.nodes.get(n) and state.nodes[n].unschedulable]
        devices = ", ".join(f"{r.pool}/{r.device}" for r in c.results)
        yield Verdict(
            category="allocated_not_reserved",
            severity="warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in pods),
                                         *(node_ref(n) for n in node_names)])),
            uids=(c.uid, *(p.uid for p in pods)),
            since=since,
            facts={
                "allocation_nodes": alloc_nodes, "devices": devices,
                "rejecting_nodes": [n.name for n in rejecting],
                "held_seconds": ctx.age(since),
                "pods": [{"name": p.name, "phase": p.phase, "node": p.node_name} for p in pods],
                "owner_gone": owner_gone,
                "cordoned": cordoned,
            },
        )


@renders("allocated_not_reserved")
def _render_allocated_not_reserved(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    why = []
    if f["pods"]:
        why.append("pod " + ", ".join(
            f"{p['name']} ({p['phase'] or '?'}, {'bound to ' + p['node'] if p['node'] else 'unbound'})"
            for p in f["pods"]))
    elif f["owner_gone"]:
        why.append("its owning pod no longer exists")
    else:
        why.append("no pod references it")
    if f["cordoned"]:
        why.append(f"allocation pins it to cordoned node {', '.join(f['cordoned'])}")
    # The nodes the finding involves besides the allocation's: say why they are there.
    tainted = [n for n in f["allocation_nodes"] if n in f["rejecting_nodes"] and n not in f["cordoned"]]
    if tainted:
        why.append(f"allocation pins it to node {', '.join(tainted)}, whose taint the pod does not tolerate")
    if others := len(set(f["rejecting_nodes"]) - set(f["allocation_nodes"])):
        why.append(f"{others} {'other ' if f['allocation_nodes'] else ''}node(s) refuse the pod"
                   " (cordoned, or a taint it does not tolerate)")
    age = f["held_seconds"]
    summary = (
        f"Claim {main.namespace}/{main.name} has held {f['devices']}"
        + (f" for {minutes(age)}" if age is not None else "")
        + " with an empty reservedFor; " + "; ".join(why) + "."
    )
    action = (
        (f"Uncordon {', '.join(f['cordoned'])} if its maintenance is over, since the allocation pins"
         " the pod there; otherwise delete the pod so its claim is released and re-allocated.")
        if f["cordoned"] else
        ("Delete the pod (or the claim, if nothing will use it) so the devices are released;"
         " check why the pod is not scheduled onto the allocated node.")
    )
    return summary, action


def rule_reserved_for_missing_pod(ctx: Context) -> Iterator[Verdict]:
    state = ctx.state
    if "Pod" not in state.kinds_seen:
        return  # a snapshot without pods cannot tell a missing consumer from an omitted one
    by_uid = state.pods_by_uid()
    for c in ctx.each_claim():
        if not c.allocated or c.deletion_timestamp:
            continue
        missing = []
        finished = []
        for r in c.reserved_for:
            if r.resource != "pods":
                continue
            pod = by_uid.get(r.uid)
            if pod is None:
                missing.append(r)
            elif pod.terminal:
                finished.append(pod)
        if not missing and not finished:
            continue
        reserved_uids = {r.uid for r in c.reserved_for}
        refused = [p for p in state.pods_using_claim(c) if p.uid not in reserved_uids and not p.terminal]
        ownerless = not c.has_owner
        absent = [ObjectRef("Pod", c.namespace, r.name) for r in missing]
        yield Verdict(
            category="reserved_for_missing_pod",
            severity="critical" if refused else "warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in refused),
                                         *(pod_ref(p) for p in finished), *absent])),
            uids=(c.uid, *(p.uid for p in refused), *(p.uid for p in finished), *("" for _ in absent)),
            since=c.allocation_timestamp,
            facts={"absent": [a.to_dict() for a in absent],
                   "refused_pods": [p.name for p in refused], "ownerless": ownerless,
                   "missing": [{"name": r.name, "uid": r.uid} for r in missing],
                   "finished_pods": [p.name for p in finished]},
        )


@renders("reserved_for_missing_pod")
def _render_reserved_for_missing_pod(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    parts = []
    if f["missing"]:
        parts.append("reservedFor names pod(s) that no longer exist: "
                     + ", ".join(f"{r['name']} (uid {r['uid']})" for r in f["missing"]))
    if f["finished_pods"]:
        parts.append("reserved for finished pod(s) " + ", ".join(f["finished_pods"]))
    if f["refused_pods"]:
        parts.append("pod(s) " + ", ".join(f["refused_pods"])
                     + " reference the claim but are not in reservedFor, so the kubelet refuses them")
    if f["ownerless"]:
        parts.append("the claim has no ownerReferences, so it is never garbage-collected")
    action = (
        "After confirming the old pod is gone from the node, delete the claim (or clear the"
        " stale reservedFor entry) and fix whatever creates claims without a pod owner."
        if f["ownerless"] else
        "Check that kube-controller-manager's resourceclaim controller runs; after confirming"
        " the pod is gone from the node, delete the claim or clear the stale reservation."
    )
    return f"Claim {main.namespace}/{main.name}: " + "; ".join(parts) + ".", action


def rule_claim_stuck_deallocating(ctx: Context) -> Iterator[Verdict]:
    state = ctx.state
    by_uid = state.pods_by_uid()
    for c in ctx.each_claim():
        if not c.deletion_timestamp or not c.finalizers:
            continue
        reserved = [(r, by_uid.get(r.uid)) for r in c.reserved_for]
        present = [p for _, p in reserved if p is not None]
        gone = [r for r, p in reserved if p is None]
        # Still reserved only for pods that no longer exist: nothing will ever release the
        # reservation, so the finalizer cannot go; that needs no waiting period.
        blocked_now = bool(c.results) and bool(gone) and not present
        if not blocked_now and not ctx.older_than(c.deletion_timestamp, ctx.thresholds.deleting_seconds):
            continue
        nodes = list(c.allocation_nodes)
        devices = ", ".join(f"{r.pool}/{r.device}" for r in c.results)
        absent = [ObjectRef("Pod", c.namespace, r.name) for r in gone]
        yield Verdict(
            category="claim_stuck_deallocating",
            severity="critical" if c.results else "warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in present), *absent,
                                         *(node_ref(n) for n in nodes)])),
            uids=(c.uid, *(p.uid for p in present)),
            since=c.deletion_timestamp,
            facts={"finalizers": list(c.finalizers), "absent": [a.to_dict() for a in absent],
                   "devices": devices, "deleting_seconds": ctx.age(c.deletion_timestamp),
                   "gone": len(gone), "present": [p.name for p in present]},
        )


@renders("claim_stuck_deallocating")
def _render_claim_stuck_deallocating(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    age = f["deleting_seconds"]
    summary = (
        f"Claim {main.namespace}/{main.name} has been deleting"
        + (f" for {minutes(age)}" if age is not None else "")
        + f", finalizers {', '.join(f['finalizers'])} remain"
        + (f", still allocated ({f['devices']})" if f["devices"] else "")
        + (f", reservedFor names {f['gone']} pod(s) that no longer exist" if f["gone"] else "")
        + (f", reserved for live pod(s) {', '.join(f['present'])}" if f["present"] else "")
        + "."
    )
    action = (
        "Confirm on the node that no container still uses the devices and that the driver"
        " unprepared the claim, check the resourceclaim controller clears reservedFor; remove"
        " the finalizer by hand only as a last resort."
    )
    return summary, action
