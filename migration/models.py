"""Readiness history: every stored checklist evaluation and every attestation, per cluster.

``ReadinessEvaluation`` rows are transitions (conventions: "transitions are rows"): a sync
stores one only when the checklist result differs from the newest stored one, so "what
changed since last week" and the history table come from rows, never from re-evaluating old
data. ``Attestation`` is a person's statement for what the cluster cannot show (pinning in
git, the change commit, a runbook); it expires ``READINESS_ATTESTATION_DAYS`` after it was
made.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models

from inventory.models import BadgeChoices, Cluster
from migration import readiness as core


class ItemStatus(BadgeChoices):
    PASS = core.PASS, "Pass"
    FAIL = core.FAIL, "Fail"
    UNKNOWN = core.UNKNOWN, "Unknown"
    ATTESTED = core.ATTESTED, "Attested"


ItemStatus.COLOURS = {core.PASS: "green", core.FAIL: "red", core.UNKNOWN: "grey", core.ATTESTED: "blue"}  # type: ignore[attr-defined]


class Trigger(models.TextChoices):
    SYNC = "sync", "After sync"
    MANUAL = "manual", "On demand"
    ATTESTATION = "attestation", "After attestation"
    DEMO = "demo", "Demo history"


def items_fingerprint(items: list[dict[str, Any]]) -> str:
    """sha256 of the items' ids, statuses, evidence and attestation: equal means no change."""
    canon = [[i["id"], i["status"], list(i.get("evidence") or []), i.get("attestation_id")] for i in items]
    return hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest()


class ReadinessEvaluation(models.Model):
    """One stored result of ``migration.readiness.evaluate_readiness``.

    ``items``: one dict per checklist item, in checklist order:
    ``{"id", "title", "status", "evidence": [str], "next_step", "attestation_id": int|None}``.
    ``score``: percent (0-100) of items passed or attested. ``fingerprint``: ``items_fingerprint``
    of ``items``, so "did anything change" is one indexed comparison.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="readiness_evaluations")
    evaluated_at = models.DateTimeField()
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.SYNC)
    score = models.PositiveSmallIntegerField()
    passed = models.PositiveSmallIntegerField()
    total = models.PositiveSmallIntegerField()
    stage = models.CharField(max_length=32, blank=True)
    items = models.JSONField(default=list)
    fingerprint = models.CharField(max_length=64)

    class Meta:
        ordering = ["-evaluated_at", "-pk"]
        get_latest_by = "evaluated_at"
        indexes = [models.Index(fields=["cluster", "-evaluated_at"], name="readiness_cluster_at")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.evaluated_at:%Y-%m-%d %H:%M} {self.score}%"

    def statuses(self) -> dict[str, str]:
        return {i["id"]: i["status"] for i in self.items}


def attestation_days() -> int:
    return int(getattr(settings, "READINESS_ATTESTATION_DAYS", 90))


class Attestation(models.Model):
    """A person's statement that checklist item ``item_id`` is met on ``cluster``.

    ``expires_at`` is set on first save to ``attested_at`` + ``READINESS_ATTESTATION_DAYS``.
    ``attested_by_name`` keeps who it was if the user is later deleted. An attestation never
    overrides a ``fail`` the cluster shows; it turns ``unknown`` into ``attested``.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="attestations")
    item_id = models.CharField(max_length=64, choices=list(core.ITEMS))
    attested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="readiness_attestations"
    )
    attested_by_name = models.CharField(max_length=150)
    attested_at = models.DateTimeField()
    evidence_url = models.URLField(max_length=1000)
    note = models.TextField(blank=True)
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-attested_at", "-pk"]
        indexes = [models.Index(fields=["cluster", "item_id", "-attested_at"], name="attestation_cluster_item")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.item_id} by {self.attested_by_name}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.expires_at is None and self.attested_at is not None:
            self.expires_at = self.attested_at + timedelta(days=attestation_days())
        if not self.attested_by_name and self.attested_by is not None:
            self.attested_by_name = self.attested_by.get_username()
        super().save(*args, **kwargs)

    def is_valid(self, now) -> bool:
        return self.attested_at <= now < self.expires_at

    def to_core(self) -> core.Attestation:
        return core.Attestation(self.item_id, self.attested_by_name, self.attested_at, self.evidence_url, self.expires_at)


class StoredPlan(models.Model):
    """The migration plan of one cluster for one target version, as the sync derived it.

    Planning reads every workload, node and GPU Operator object of the cluster (seconds on a
    large one), so a page must not replan per request: the sync that changed any kind the
    planner reads (``migration.apps.PLAN_KINDS``) drops these rows and stores the default
    target's plan in the same transaction; other targets are planned on first request. ``plan``
    is the pickled (planning code's fingerprint, ``migration.planner.MigrationPlan``) (our own
    rows, never cluster bytes); a row another release's planner made, or that no longer
    unpickles, is planned again on request.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="stored_plans")
    target_version = models.CharField(max_length=16)
    planned_at = models.DateTimeField()
    plan = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "target_version"], name="storedplan_cluster_target")]

    def __str__(self) -> str:
        return f"{self.cluster} plan for {self.target_version}"
