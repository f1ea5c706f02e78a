"""The last rule: ``pending_unexplained``. The diagnosis is never silent about a long wait.

Pure: no Django. Runs after every other rule (last in ``engine.RULES``) and reads what they
reported (``Context.reported``). A claim, or a pod using DRA claims, that has waited longer
than ``Thresholds.pending_seconds`` and that no finding names gets one finding saying what
was checked (class, selectors, matching and free devices per the feasibility check, binding
conditions) and quoting the scheduler (``FailedScheduling`` events, the pod's
``PodScheduled`` condition).

What waits: an unallocated claim a live unbound pod uses (``Context.pending_claims``), a
live unbound pod whose claims are all allocated (the scheduler has not bound it), and a live
unbound pod asking for an extended resource a DeviceClass serves (its claim does not exist
until the scheduler finds a node). Not
waiting, so not reported: a claim whose devices' binding conditions are pending within the
binding timeout (the scheduler is still in PreBind), and pods already bound to a node (the
kubelet's side has its own rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from claims.diagnosis.context import Context, claim_ref, minutes, pod_ref
from claims.diagnosis.rules_pending import waiting_on_binding
from claims.diagnosis.verdicts import Verdict, renders
from inventory.capacity import extended_resource_classes
from inventory.kube import ObjectRef
from inventory.records import Pod, ResourceClaim


def _named(ctx: Context) -> set[ObjectRef]:
    return {o for f in ctx.reported for o in f.objects}


def _scheduler_says(ctx: Context, pods: list[Pod]) -> list[dict[str, Any]]:
    out = list(ctx.scheduling_messages(pods))
    for p in pods:
        cond = p.condition("PodScheduled")
        if cond is not None and cond.status == "False" and cond.message:
            out.append({"pod": p.name, "message": cond.message, "reason": cond.reason, "condition": "PodScheduled"})
    return out


def _waiting(ctx: Context) -> Iterator[tuple[list[ResourceClaim], list[Pod], str]]:
    """(claims, pods, kind) that wait: ``unallocated`` claims, or ``unbound`` pods whose
    claims are all allocated."""
    seen_pods: set[tuple[str, str]] = set()
    for claim, pods in ctx.pending_claims():
        seen_pods.update((p.namespace, p.name) for p in pods)
        yield [claim], pods, "unallocated"
    state = ctx.state
    for pod in ctx.each_pod():
        if (pod.namespace, pod.name) in seen_pods or pod.node_name or pod.terminal or pod.deletion_timestamp:
            continue
        names = [n for _, n in state.pod_claim_names(pod)]
        if not names or any(n is None for n in names):
            continue  # a reference that leads nowhere: claim_not_found / template_claim_missing
        claims = [state.claims.get((pod.namespace, n or "")) for n in names]
        if any(c is None for c in claims):
            continue
        present = [c for c in claims if c is not None]
        if all(c.allocated for c in present):
            yield present, [pod], "unbound"
    # Pods asking for an extended resource a DeviceClass serves (``extendedResourceName``, or the
    # implicit ``deviceclass.resource.kubernetes.io/<class>``): the scheduler makes their claim
    # only once it finds a node, so a pod it cannot place has no claim at all.
    classes = list(state.device_classes.values())
    if not classes:
        return
    for pod in ctx.each_pod():
        if (pod.namespace, pod.name) in seen_pods or pod.node_name or pod.terminal or pod.deletion_timestamp:
            continue
        if pod.resource_claims or pod.extended_resource_claim is not None:
            continue
        if extended_resource_classes(pod, classes):
            yield [], [pod], "extended_resource"


def _pool_waits(ctx: Context, claim: ResourceClaim) -> list[str]:
    """Pools that hold the claim back as the scheduler gathers them: an invalid pool (a device
    listed twice in its newest generation) fails every allocation on a node that sees it; an
    incomplete one fails a request for All devices ("resource pool ... is currently being
    updated")."""
    state = ctx.state
    out = []
    if state.invalid_pools:
        named, verb = _some_pools(state.invalid_pools, lambda names: f"lists {', '.join(names[:3])} twice")
        out.append(f"{claim.name}: {named} {verb} invalid: the scheduler allocates nothing on a node that sees one"
                   " until the driver lists each device once")
    if not state.incomplete_pools:
        return out
    for req in claim.requests:
        if any(b.allocation_mode == "All" for b in req.bodies):
            named, verb = _some_pools(state.incomplete_pools,
                                      lambda st: f"{st.published} of {st.expected} slices of generation {st.newest}")
            out.append(f"{claim.name} request {req.name} asks for All devices, and {named} {verb} incomplete: the"
                       " scheduler refuses such a request until the driver has published the whole pool")
    return out


def _some_pools(pools: dict[tuple[str, str], Any], describe: Callable[[Any], str]) -> tuple[str, str]:
    """("pool d/p (...)" or "pools d/p (...), ... and N more", "is" or "are"): at most three named."""
    items = sorted(pools.items())
    named = ", ".join(f"{driver}/{pool} ({describe(v)})" for (driver, pool), v in items[:3])
    more = f" and {len(items) - 3} more" if len(items) > 3 else ""
    many = len(items) > 1
    return f"pool{'s' if many else ''} {named}{more}", "are" if many else "is"


def _only_unplaceable(ctx: Context, claim: ResourceClaim, nodes: Iterable[str]) -> list[str]:
    """The claim fits only on nodes the scheduler places no pod on (cordoned, or NotReady)."""
    state = ctx.state
    why = {}
    for n in nodes:
        node = state.nodes.get(n)
        if node is None:
            return []  # a node known only from its slices: its status is unknown
        if node.unschedulable:
            why[n] = "cordoned"
        elif node.ready is False:
            why[n] = "NotReady"
        else:
            return []
    if not why:
        return []
    named = ", ".join(f"{n} ({w})" for n, w in sorted(why.items())[:5])
    return [f"{claim.name}: fits only on {named}: the scheduler places no pod on such a node"]


def rule_pending_unexplained(ctx: Context) -> Iterator[Verdict]:
    """pending_unexplained: what has waited past the threshold with no other finding."""
    named = _named(ctx)
    for claims, pods, kind in _waiting(ctx):
        refs = [claim_ref(c) for c in claims] + [pod_ref(p) for p in pods]
        if any(r in named for r in refs):
            continue
        since = ctx.pending_since(claims[0] if claims and kind == "unallocated" else None, pods)
        age = ctx.age(since)
        if age is None or age < ctx.thresholds.pending_seconds:
            continue  # the wait itself is the evidence: an unknown start proves nothing
        binding = [waiting_on_binding(ctx, c)[0] for c in claims]
        if "waiting" in binding:
            continue  # the scheduler waits for binding conditions: not stuck before the timeout
        checks: list[str] = []
        pool_waits: list[str] = []
        unplaceable: list[str] = []
        if kind == "extended_resource":
            for p in pods:
                mapped = extended_resource_classes(p, ctx.state.device_classes.values())
                for cont in p.pod_spec.all_containers():
                    for name in cont.resource_names:
                        if name in mapped:
                            qty = cont.limits.get(name, cont.requests.get(name))
                            checks.append(f"container {cont.name} asks for {qty} {name}, served by DeviceClass"
                                          f" {mapped[name]}; the scheduler creates its claim once a node fits")
        for c in claims:
            if kind == "unallocated":
                waits = _pool_waits(ctx, c)
                pool_waits.extend(waits)
                checks.extend(waits)  # first: the summary quotes the start of the checks
                feas = ctx.feasibility(c)
                checks.append(f"{c.name}: {feas.verdict} ({feas.detail})")
                only = _only_unplaceable(ctx, c, feas.evidence.get("nodes") or ())
                unplaceable.extend(only)
                checks[:0] = only  # first: the summary quotes the start of the checks
            else:
                nodes = ", ".join(c.allocation_nodes) or "any node"
                checks.append(f"{c.name}: allocated for {nodes}, reserved for {len(c.reserved_for)} consumer(s)")
        yield Verdict(
            category="pending_unexplained",
            severity="warning",
            objects=tuple(dict.fromkeys(refs)),
            uids=tuple(x.uid for x in [*claims, *pods]),
            since=since,
            facts={
                "waiting": kind,
                "pending_seconds": ctx.age(since),
                "threshold_seconds": ctx.thresholds.pending_seconds,
                "checked": checks,
                "pool_problem": bool(pool_waits),
                "unplaceable_only": bool(unplaceable),
                "failed_rules": [f.rule for f in ctx.failed],
                "scheduler": _scheduler_says(ctx, pods)[:5],
            },
        )


@renders("pending_unexplained")
def _render_pending_unexplained(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    age = f["pending_seconds"]
    what = "claim" if main.kind == "ResourceClaim" else "pod"
    quote = f["scheduler"][-1]["message"][:200] if f["scheduler"] else None
    summary = (
        f"{what.capitalize()} {main.namespace}/{main.name} has been pending"
        + (f" {minutes(age)}" if age is not None else " longer than the threshold")
        + (" with its claims allocated but the pod not bound" if f["waiting"] == "unbound" else "")
        + "; no rule explains it (checked: " + "; ".join(f["checked"])[:300] + ")"
        + (f"; rule(s) {', '.join(f['failed_rules'])} failed, their findings may be missing"
           if f.get("failed_rules") else "")
        + (f"; the scheduler says: '{quote}'" if quote else "; the scheduler has written no event")
        + "."
    )
    if f.get("pool_problem"):
        action = (
            "Find why the driver has not published the pool as the scheduler needs it, each device once"
            " and every slice of the newest generation (kubectl get resourceslices -o"
            " custom-columns=NAME:.metadata.name,POOL:.spec.pool.name,GENERATION:.spec.pool.generation,"
            "COUNT:.spec.pool.resourceSliceCount; the kubelet plugin's log on the pool's node): a plugin"
            " that restarted mid-rewrite, or slices it cannot create. Once the pool is whole and valid the"
            " scheduler allocates the claim; a request for a count instead of All does not wait for a"
            " missing slice."
        )
    elif f.get("unplaceable_only"):
        action = (
            "The devices it fits are on cordoned or NotReady nodes only: uncordon the node (kubectl uncordon)"
            " or bring it back to Ready, or free matching devices on a schedulable node; kubectl describe pod"
            " should say 'node(s) were unschedulable'."
        )
    else:
        action = (
            "Read the scheduler's events and log for the pod (kubectl describe pod; kube-scheduler at -v=5"
            " for DynamicResources), compare them with the checks above, and report the case: it is not a"
            " failure mode this tool knows yet."
        )
    return summary, action
