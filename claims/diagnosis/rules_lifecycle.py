"""Rules for claims after allocation: allocated_not_reserved, reserved_for_missing_pod,
claim_stuck_deallocating.

Pure: no Django. Evidence: ``status.allocation`` (``allocationTimestamp``, ``nodeSelector``),
``status.reservedFor[].uid`` against existing pods, ``metadata.deletionTimestamp`` and
``metadata.finalizers``.
"""

from __future__ import annotations

from collections.abc import Iterator

from claims.diagnosis.context import Context, claim_ref, minutes, node_ref, pod_ref
from claims.diagnosis.findings import Finding
from inventory.kube import ObjectRef
from inventory.records import Node, Pod


def _rejecting_nodes(ctx: Context, pod: Pod) -> list[Node]:
    """Nodes that refuse the pod before DRA is considered: cordoned or untolerated taint."""
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


def rule_allocated_not_reserved(ctx: Context) -> Iterator[Finding]:
    state = ctx.state
    for c in state.claims.values():
        if not c.allocated or c.reserved_for or c.deletion_timestamp:
            continue
        since = c.allocation_timestamp or c.created
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
        age = ctx.age(since)
        devices = ", ".join(f"{r.pool}/{r.device}" for r in c.results)
        why = []
        if pods:
            why.append(
                "pod " + ", ".join(f"{p.name} ({p.phase or '?'}, {'bound to ' + p.node_name if p.node_name else 'unbound'})" for p in pods)
            )
        elif owner_gone:
            why.append("its owning pod no longer exists")
        else:
            why.append("no pod references it")
        if cordoned:
            why.append(f"allocation pins it to cordoned node {', '.join(cordoned)}")
        yield Finding(
            category="allocated_not_reserved",
            severity="warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in pods),
                                         *(node_ref(n) for n in node_names)])),
            summary=(
                f"Claim {c.namespace}/{c.name} has held {devices}"
                + (f" for {minutes(age)}" if age is not None else "")
                + " with an empty reservedFor; " + "; ".join(why) + "."
            ),
            next_action=(
                (f"Uncordon {', '.join(cordoned)} if its maintenance is over, since the allocation pins"
                 " the pod there; otherwise delete the pod so its claim is released and re-allocated.")
                if cordoned else
                ("Delete the pod (or the claim, if nothing will use it) so the devices are released;"
                 " check why the pod is not scheduled onto the allocated node.")
            ),
            since=since,
            evidence={"allocation_nodes": alloc_nodes, "devices": devices,
                      "rejecting_nodes": [n.name for n in rejecting]},
        )


def rule_reserved_for_missing_pod(ctx: Context) -> Iterator[Finding]:
    state = ctx.state
    if "Pod" not in state.kinds_seen:
        return  # a snapshot without pods cannot tell a missing consumer from an omitted one
    by_uid = state.pods_by_uid()
    for c in state.claims.values():
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
        parts = []
        if missing:
            parts.append("reservedFor names pod(s) that no longer exist: "
                         + ", ".join(f"{r.name} (uid {r.uid})" for r in missing))
        if finished:
            parts.append("reserved for finished pod(s) " + ", ".join(p.name for p in finished))
        if refused:
            parts.append("pod(s) " + ", ".join(p.name for p in refused)
                         + " reference the claim but are not in reservedFor, so the kubelet refuses them")
        if ownerless:
            parts.append("the claim has no ownerReferences, so it is never garbage-collected")
        yield Finding(
            category="reserved_for_missing_pod",
            severity="critical" if refused else "warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in refused),
                                         *(pod_ref(p) for p in finished), *absent])),
            summary=f"Claim {c.namespace}/{c.name}: " + "; ".join(parts) + ".",
            next_action=(
                "After confirming the old pod is gone from the node, delete the claim (or clear the"
                " stale reservedFor entry) and fix whatever creates claims without a pod owner."
                if ownerless else
                "Check that kube-controller-manager's resourceclaim controller runs; after confirming"
                " the pod is gone from the node, delete the claim or clear the stale reservation."
            ),
            since=c.allocation_timestamp,
            evidence={"absent": [a.to_dict() for a in absent],
                      "refused_pods": [p.name for p in refused], "ownerless": ownerless},
        )


def rule_claim_stuck_deallocating(ctx: Context) -> Iterator[Finding]:
    state = ctx.state
    by_uid = state.pods_by_uid()
    for c in state.claims.values():
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
        age = ctx.age(c.deletion_timestamp)
        nodes = list(c.allocation_nodes)
        devices = ", ".join(f"{r.pool}/{r.device}" for r in c.results)
        absent = [ObjectRef("Pod", c.namespace, r.name) for r in gone]
        yield Finding(
            category="claim_stuck_deallocating",
            severity="critical" if c.results else "warning",
            objects=tuple(dict.fromkeys([claim_ref(c), *(pod_ref(p) for p in present), *absent,
                                         *(node_ref(n) for n in nodes)])),
            summary=(
                f"Claim {c.namespace}/{c.name} has been deleting"
                + (f" for {minutes(age)}" if age is not None else "")
                + f", finalizers {', '.join(c.finalizers)} remain"
                + (f", still allocated ({devices})" if devices else "")
                + (f", reservedFor names {len(gone)} pod(s) that no longer exist" if gone else "")
                + (f", reserved for live pod(s) {', '.join(p.name for p in present)}" if present else "")
                + "."
            ),
            next_action=(
                "Confirm on the node that no container still uses the devices and that the driver"
                " unprepared the claim, check the resourceclaim controller clears reservedFor; remove"
                " the finalizer by hand only as a last resort."
            ),
            since=c.deletion_timestamp,
            evidence={"finalizers": list(c.finalizers), "absent": [a.to_dict() for a in absent],
                      "devices": devices},
        )
