"""Run every rule over a ClusterState and return the findings, most severe and oldest first.

Each rule yields ``verdicts.Verdict``s (category, objects, uids, facts); the engine refuses a
category the rule does not declare in ``RULES`` and has the category's renderer write the
finding's summary and next action (a rule may still yield a finished ``Finding``).

Pure: no Django, no clock: ``now`` is an input (the clock for a live cluster, the newest
timestamp of a snapshot otherwise).

One rule failing (a bug, an object shaped like nothing the rule expected) never hides what the
other rules found, nor what the failing rule reported before it failed: the failure is kept as
data (``AnalysisFailure``) next to the findings, so a sync can say that an analysis failed
instead of reporting a clean cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from claims.diagnosis import (
    rules_health,
    rules_lifecycle,
    rules_node,
    rules_pending,
    rules_selector,
    rules_telemetry,
    rules_unexplained,
)
from claims.diagnosis.context import Context
from claims.diagnosis.findings import SEVERITY_RANK, Finding
from claims.diagnosis.scope import Scope
from claims.diagnosis.state import ClusterState
from claims.diagnosis.thresholds import Thresholds
from claims.diagnosis.verdicts import Verdict, render
from inventory.kube import ObjectRef, parse_time

Rule = Callable[[Context], Iterable[Finding | Verdict]]


class UndeclaredCategory(RuntimeError):
    """A rule emitted a category it does not declare in ``RULES`` (a bug in the rule)."""

log = logging.getLogger(__name__)

# Rule -> the categories it can report (a test checks every category has a rule). The engine
# enforces it: a rule emitting another category stops with an ``AnalysisFailure``.
# ``rules_unexplained`` runs last: it reads what the others reported (``Context.reported``).
RULES: tuple[tuple[Rule, tuple[str, ...]], ...] = (
    (rules_pending.rule_allocation, ("device_class_missing", "no_matching_device",
                                     "capacity_exhausted", "constraint_unsatisfiable",
                                     "capacity_fragmented")),
    (rules_pending.rule_claim_references, ("claim_not_found", "template_claim_missing")),
    (rules_pending.rule_feature_gates, ("feature_gate_disabled",)),
    (rules_pending.rule_scheduler_known_bug, ("scheduler_known_bug",)),
    (rules_pending.rule_binding_conditions, ("binding_failed",)),
    (rules_selector.rule_selector_invalid, ("selector_invalid",)),
    (rules_node.rule_driver_publishing, ("driver_publishing_empty_pool",
                                         "driver_not_publishing_on_node")),
    (rules_node.rule_kubelet_events, ("driver_not_registered_on_node", "cdi_injection_failed",
                                      "prepare_failed_on_node")),
    (rules_node.rule_stale_slice, ("stale_slice_driver_unavailable",)),
    (rules_node.rule_mig_not_published, ("mig_instance_not_published",)),
    (rules_node.rule_overlapping_devices, ("overlapping_devices_double_allocation",)),
    (rules_node.rule_unprepare_blocked, ("unprepare_blocked_driver_unavailable",)),
    (rules_node.rule_device_taints, ("device_taint_eviction",)),
    (rules_node.rule_taint_rule_too_broad, ("device_taint_rule_too_broad",)),
    (rules_health.rule_cdi_spec_invalid, ("cdi_spec_invalid",)),
    (rules_health.rule_device_unhealthy, ("device_unhealthy",)),
    (rules_lifecycle.rule_allocated_not_reserved, ("allocated_not_reserved",)),
    (rules_lifecycle.rule_reserved_for_missing_pod, ("reserved_for_missing_pod",)),
    (rules_lifecycle.rule_claim_stuck_deallocating, ("claim_stuck_deallocating",)),
    (rules_telemetry.rule_pod_attribution, ("metrics_pod_attribution_missing",)),
    (rules_telemetry.rule_missing_for_unallocated, ("metrics_missing_for_unallocated_devices",)),
    (rules_telemetry.rule_metric_not_on_mig, ("metric_not_supported_on_mig",)),
    (rules_unexplained.rule_pending_unexplained, ("pending_unexplained",)),
)


# Rules that read the cluster as a whole (control-plane versions and feature gates, kubelet
# plugins anywhere, DeviceTaintRules, DCGM scrapes): a scoped diagnosis runs them over the
# whole cluster, and their categories are replaced whole.
GLOBAL_RULES = frozenset({
    rules_pending.rule_feature_gates, rules_pending.rule_scheduler_known_bug, rules_node.rule_driver_publishing,
    rules_node.rule_taint_rule_too_broad, rules_telemetry.rule_pod_attribution,
    rules_telemetry.rule_missing_for_unallocated, rules_telemetry.rule_metric_not_on_mig,
})  # fmt: skip
GLOBAL_CATEGORIES = frozenset(c for rule, cats in RULES if rule in GLOBAL_RULES for c in cats)


class ScopeEscaped(RuntimeError):
    """A scoped rule reported on a main object outside the scope: the scope missed a relation
    (the caller diagnoses the whole cluster instead)."""


def _sort_key(f: Finding) -> tuple[int, float, str, str]:
    dt = parse_time(f.since)
    # Oldest first; findings without a start time after those with one.
    return (SEVERITY_RANK[f.severity], dt.timestamp() if dt else float("inf"), f.category,
            f.objects[0].name if f.objects else "")


@dataclass(frozen=True)
class AnalysisFailure:
    """A rule that raised instead of finishing.

    ``rule``: its name (``rules_node.rule_stale_slice``); ``categories``: what it could have
    reported, so what may be missing; ``error``: ``ExceptionType: message``; ``kept``: findings
    it had reported before it failed (they are in the result)."""

    rule: str
    categories: tuple[str, ...]
    error: str
    kept: int = 0

    def message(self) -> str:
        """One line for a run's problems: ``analysis rules_x.rule_y failed (...): Error: ...``."""
        return (f"analysis {self.rule} failed ({', '.join(self.categories)} may be missing,"
                f" {self.kept} finding(s) kept): {self.error}")


class Findings(list[Finding]):
    """The findings, as a list, with ``failures``: the rules that failed (empty when every
    rule finished)."""

    failures: tuple[AnalysisFailure, ...] = ()
    scope: Scope | None = None  # a scoped diagnosis: what it covered
    scope_uids: frozenset[str] | set[str] = frozenset()  # the stored uids of the scope's objects
    uid_of: dict | None = None  # (kind, namespace, name) -> stored uid, from the state (``claims.store``)


@dataclass(frozen=True)
class Diagnosis:
    """``findings`` sorted most severe then oldest first; ``failures`` of rules that raised."""

    findings: list[Finding] = field(default_factory=list)
    failures: tuple[AnalysisFailure, ...] = ()
    scope: Scope | None = None  # what a scoped diagnosis covered (``run_diagnosis``)


def _rule_name(rule: Rule) -> str:
    module = getattr(rule, "__module__", "") or ""
    return f"{module.rpartition('.')[2]}.{getattr(rule, '__name__', repr(rule))}"


def run_diagnosis(state: ClusterState, now: datetime, thresholds: Thresholds | None = None,
                  rules: tuple[tuple[Rule, tuple[str, ...]], ...] = RULES, scope: Scope | None = None,
                  widen: Callable[[set[ObjectRef]], Scope] | None = None) -> Diagnosis:
    """Every rule over ``state`` at ``now`` (aware datetime), each isolated: a rule that raises
    keeps the findings it reported before, and becomes one ``AnalysisFailure``. Never raises
    for what a rule does (``Exception``; ``KeyboardInterrupt`` and the like pass).

    ``scope`` (``claims.diagnosis.scope``): only its subjects are diagnosed by the per-subject
    rules (``GLOBAL_RULES`` still read everything first, and what they name joins the scope
    through ``widen(refs) -> Scope``). The findings are then those of the scope's main objects
    plus every ``GLOBAL_CATEGORIES`` finding. Raises ``ScopeEscaped`` when a scoped rule
    reports on a main object outside the scope."""
    ctx = Context(state=state, now=now, thresholds=thresholds or Thresholds())
    if scope is not None:  # the whole-cluster rules first: what they name is in the scope too
        rules = (*(r for r in rules if r[0] in GLOBAL_RULES), *(r for r in rules if r[0] not in GLOBAL_RULES))
    seen: set[tuple[str, object]] = set()
    out: list[Finding] = []
    failures: list[AnalysisFailure] = []
    widened = False
    for rule, categories in rules:
        kept = 0
        if scope is not None:
            if rule not in GLOBAL_RULES and not widened:
                widened = True
                if widen is not None:
                    scope = widen({o for f in out for o in f.objects})
            ctx.scope = None if rule in GLOBAL_RULES else scope
        try:
            for item in rule(ctx):
                if item.category not in categories:
                    raise UndeclaredCategory(
                        f"emitted {item.category!r}, which it does not declare ({', '.join(categories)})"
                    )
                f = render(item) if isinstance(item, Verdict) else item
                key = (f.category, f.objects[0] if f.objects else f.summary)
                if key in seen:
                    continue
                if ctx.scope is not None and f.objects and not ctx.scope.covers(f.objects[0]):
                    raise ScopeEscaped(f"{_rule_name(rule)} reported on {f.objects[0]}, outside the scope")
                seen.add(key)
                out.append(f)
                ctx.reported.append(f)
                kept += 1
        except ScopeEscaped:
            raise
        except Exception as exc:  # one rule's bug must not hide the others' findings
            name = _rule_name(rule)
            log.warning("diagnosis rule %s failed", name, exc_info=True)
            failures.append(AnalysisFailure(name, categories, f"{type(exc).__name__}: {exc}"[:500], kept))
            ctx.failed.append(failures[-1])
    return Diagnosis(sorted(out, key=_sort_key), tuple(failures), scope)


def diagnose(state: ClusterState, now: datetime, thresholds: Thresholds | None = None) -> Findings:
    """All findings for ``state`` at ``now`` (aware datetime), sorted most severe then oldest
    first, one per (category, main object). A healthy cluster gives an empty list. Rules that
    failed are in the result's ``failures`` (``run_diagnosis`` gives both as a ``Diagnosis``)."""
    result = run_diagnosis(state, now, thresholds)
    findings = Findings(result.findings)
    findings.failures = result.failures
    return findings
