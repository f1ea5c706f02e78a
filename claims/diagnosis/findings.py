"""Findings: what the diagnosis reports, in the fixed category vocabulary.

Pure: no Django. The category names are the stable vocabulary of
docs/diagnosis-categories.md; tests, runbooks (``claims/runbooks/<category>.md``), metrics and
the JSON output use them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inventory.kube import ObjectRef  # a finding's objects: namespace None for cluster-scoped kinds

__all__ = ["CATEGORIES", "SEVERITIES", "SEVERITY_RANK", "Finding", "ObjectRef", "dedupe_objects"]

CATEGORIES: tuple[str, ...] = (
    # before allocation
    "device_class_missing",
    "no_matching_device",
    "capacity_exhausted",
    "constraint_unsatisfiable",
    "feature_gate_disabled",
    "scheduler_known_bug",
    "claim_not_found",
    "template_claim_missing",
    "selector_invalid",
    "capacity_fragmented",
    "binding_failed",
    "pending_unexplained",
    # driver and node
    "driver_not_publishing_on_node",
    "driver_publishing_empty_pool",
    "driver_not_registered_on_node",
    "stale_slice_driver_unavailable",
    "mig_instance_not_published",
    "overlapping_devices_double_allocation",
    "prepare_failed_on_node",
    "cdi_injection_failed",
    "cdi_spec_invalid",
    "device_unhealthy",
    "unprepare_blocked_driver_unavailable",
    "device_taint_eviction",
    "device_taint_rule_too_broad",
    # claim lifecycle
    "allocated_not_reserved",
    "reserved_for_missing_pod",
    "claim_stuck_deallocating",
    # telemetry
    "metrics_pod_attribution_missing",
    "metrics_missing_for_unallocated_devices",
    "metric_not_supported_on_mig",
)

SEVERITIES: tuple[str, ...] = ("critical", "warning", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Finding:
    """One diagnosis.

    ``objects``: the involved objects, the main one first (claim, pod or node).
    ``summary``: one line naming the evidence. ``next_action``: one sentence.
    ``runbook``: the category (file ``claims/runbooks/<category>.md``).
    ``since``: RFC 3339 time the condition began, when known ("pending for 42 min").
    ``evidence``: facts behind the finding (JSON-serialisable), e.g. matching device counts,
    event messages, objects referred to but absent (``absent``: list of ObjectRef dicts).
    """

    category: str
    severity: str
    objects: tuple[ObjectRef, ...]
    summary: str
    next_action: str
    runbook: str = ""
    since: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown diagnosis category {self.category!r}")
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        if not self.runbook:
            object.__setattr__(self, "runbook", self.category)

    def to_dict(self) -> dict[str, Any]:
        """``{category, severity, objects: [{kind, namespace, name}], summary, next_action,
        runbook, since, evidence}``."""
        return {
            "category": self.category,
            "severity": self.severity,
            "objects": [o.to_dict() for o in self.objects],
            "summary": self.summary,
            "next_action": self.next_action,
            "runbook": self.runbook,
            "since": self.since,
            "evidence": self.evidence,
        }


def dedupe_objects(refs: list[ObjectRef]) -> tuple[ObjectRef, ...]:
    """Keep the first occurrence of each object, in order."""
    seen: set[ObjectRef] = set()
    out = []
    for r in refs:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return tuple(out)
