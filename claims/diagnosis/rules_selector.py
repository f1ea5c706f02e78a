"""Rule for CEL selectors the allocation cannot get past: ``selector_invalid``.

Pure: no Django. Two ways a selector stops a claim, both judged on the claim's requests (the
DeviceClass selectors first, then the request's own, the order the scheduler evaluates them):

- it cannot be evaluated at all: it does not compile, is longer than the API server accepts,
  nests deeper or costs more than ``inventory.cel`` allows (``feasibility`` gives the verdict
  ``selector_error``). The API server validates selectors when they are written, so in a live
  cluster this mostly means a function Claimscope's CEL environment lacks: the finding says so;
- it fails at run time on published devices (a missing attribute, a type mismatch, a result
  that is not a bool): the scheduler aborts the claim's allocation on such an error, whatever
  the other devices would have matched (``CELDeviceSelector.expression`` API docs).
"""

from __future__ import annotations

from collections.abc import Iterator

from claims.diagnosis.context import Context, claim_ref, minutes, pod_ref
from claims.diagnosis.verdicts import Verdict, renders
from inventory.cel import selector_problem
from inventory.kube import ObjectRef


def _bad_selectors(ctx: Context, class_name: str | None, own: tuple[str, ...]) -> list[dict[str, str]]:
    """The selectors of one request that cannot be evaluated: {source, expression, problem}."""
    out = []
    dc = ctx.state.device_classes.get(class_name or "")
    sources = [(f"DeviceClass {class_name}", e) for e in (dc.selectors if dc else ())]
    sources += [("request", e) for e in own]
    for source, expr in sources:
        problem = selector_problem(expr)
        if problem:
            out.append({"source": source, "expression": expr[:500], "problem": problem})
    return out


def rule_selector_invalid(ctx: Context) -> Iterator[Verdict]:
    """selector_invalid: a pending claim whose selectors cannot be evaluated, or fail at run
    time on published devices."""
    for claim, pods in ctx.pending_claims():
        since = ctx.pending_since(claim, pods)
        if not ctx.older_than(since, ctx.thresholds.pending_seconds):
            continue
        feas = ctx.feasibility(claim)  # first: an evaluation that runs out of steps marks its selector
        bad: list[dict[str, str]] = []
        classes: set[str] = set()
        for req in claim.requests:
            for body in req.bodies:  # firstAvailable alternatives each
                found = _bad_selectors(ctx, body.device_class, tuple(body.selectors))
                bad.extend({**b, "request": str(req.name)} for b in found)
                if body.device_class and any(b["source"].startswith("DeviceClass") for b in found):
                    classes.add(body.device_class)
        runtime = [e for r in feas.requests for e in r.errors]
        if feas.verdict == "selector_error" and not bad:
            bad.append({"source": "request", "expression": "", "problem": feas.detail, "request": ""})
        if not bad and not runtime:
            continue
        objs = [claim_ref(claim), *(pod_ref(p) for p in pods)]
        tmpl = ctx.template_ref_for(claim, pods)
        if tmpl:
            objs.append(tmpl)
        objs.extend(ObjectRef("DeviceClass", None, c) for c in sorted(classes))
        yield Verdict(
            category="selector_invalid",
            severity="warning" if bad else "critical",
            objects=tuple(objs),
            uids=(claim.uid, *(p.uid for p in pods)),
            since=since,
            facts={
                "verdict": feas.verdict,
                "selectors": bad,
                "runtime_errors": runtime[:5],
                "pending_seconds": ctx.age(since),
                "scheduling_events": ctx.scheduling_messages(pods),
            },
        )


@renders("selector_invalid")
def _render_selector_invalid(v: Verdict) -> tuple[str, str]:
    f = v.facts
    main = v.objects[0]
    who = f"{main.namespace}/{main.name}"
    age = f["pending_seconds"]
    pending_txt = f", pending {minutes(age)}" if age is not None else ""
    bad, runtime = f["selectors"], f["runtime_errors"]
    if bad:
        first = bad[0]
        summary = (
            f"Claim {who}: a selector of {first['source']} cannot be evaluated: {first['problem']}"
            + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "") + f"{pending_txt}."
        )
        action = (
            "Simplify the selector (the API server refuses expressions over 10,240 bytes or its cost"
            " limit); if kubectl accepted it, it uses CEL Claimscope cannot evaluate: check it by hand"
            " against the slices, this diagnosis cannot judge the claim's devices."
        )
    else:
        summary = (
            f"Claim {who}: its selectors fail at run time on"
            f" {'at least ' if len(runtime) >= 5 else ''}{len(runtime)} published device(s)"
            f" (first: {runtime[0]}); the scheduler aborts the claim's allocation on such an error{pending_txt}."
        )
        action = (
            "Guard attribute reads in the selector (`'name' in device.attributes['domain'] && ...`) or"
            " check device.driver first, so the expression is true or false on every device."
        )
    return summary, action
