"""Run every rule over a ClusterState and return the findings, most severe and oldest first.

Pure: no Django, no clock: ``now`` is an input (the clock for a live cluster, the newest
timestamp of a snapshot otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from claims.diagnosis import rules_lifecycle, rules_node, rules_pending, rules_telemetry
from claims.diagnosis.context import Context
from claims.diagnosis.findings import SEVERITY_RANK, Finding
from claims.diagnosis.state import ClusterState
from claims.diagnosis.thresholds import Thresholds
from inventory.kube import parse_time

Rule = Callable[[Context], Iterable[Finding]]

# Rule -> the categories it can report (a test checks every category has a rule).
RULES: tuple[tuple[Rule, tuple[str, ...]], ...] = (
    (rules_pending.rule_allocation, ("device_class_missing", "no_matching_device",
                                     "capacity_exhausted", "constraint_unsatisfiable")),
    (rules_pending.rule_claim_references, ("claim_not_found", "template_claim_missing")),
    (rules_pending.rule_feature_gates, ("feature_gate_disabled",)),
    (rules_pending.rule_scheduler_known_bug, ("scheduler_known_bug",)),
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
    (rules_lifecycle.rule_allocated_not_reserved, ("allocated_not_reserved",)),
    (rules_lifecycle.rule_reserved_for_missing_pod, ("reserved_for_missing_pod",)),
    (rules_lifecycle.rule_claim_stuck_deallocating, ("claim_stuck_deallocating",)),
    (rules_telemetry.rule_pod_attribution, ("metrics_pod_attribution_missing",)),
    (rules_telemetry.rule_missing_for_unallocated, ("metrics_missing_for_unallocated_devices",)),
    (rules_telemetry.rule_metric_not_on_mig, ("metric_not_supported_on_mig",)),
)


def _sort_key(f: Finding) -> tuple[int, float, str, str]:
    dt = parse_time(f.since)
    # Oldest first; findings without a start time after those with one.
    return (SEVERITY_RANK[f.severity], dt.timestamp() if dt else float("inf"), f.category,
            f.objects[0].name if f.objects else "")


def diagnose(state: ClusterState, now: datetime, thresholds: Thresholds | None = None) -> list[Finding]:
    """All findings for ``state`` at ``now`` (aware datetime), sorted most severe then oldest
    first, one per (category, main object). A healthy cluster gives an empty list."""
    ctx = Context(state=state, now=now, thresholds=thresholds or Thresholds())
    seen: set[tuple[str, object]] = set()
    out: list[Finding] = []
    for rule, _ in RULES:
        for f in rule(ctx):
            key = (f.category, f.objects[0] if f.objects else f.summary)
            if key in seen:
                continue
            seen.add(key)
            out.append(f)
    return sorted(out, key=_sort_key)
