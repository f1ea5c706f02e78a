"""Stored diagnosis: open and resolved findings, and the transitions of claims and findings.

``claims.store.record_diagnosis`` writes these after every sync (see ``ClaimsConfig.after_sync``);
pages only read them. Times are the diagnosis ``now``: the clock for a live cluster, the newest
timestamp of the snapshot for a snapshot cluster, so a snapshot's history reads in its own time.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from claims.diagnosis.findings import CATEGORIES, SEVERITIES
from inventory.models import BadgeChoices, Cluster, ResourceClaim


def _label(category: str) -> str:
    return category.replace("_", " ").capitalize()


# The fixed vocabulary of claims/diagnosis/findings.py (docs: diagnosis-categories.md).
Category = models.TextChoices("Category", [(c.upper(), (c, _label(c))) for c in CATEGORIES])


class Severity(BadgeChoices):
    CRITICAL = "critical", "Critical"
    WARNING = "warning", "Warning"
    INFO = "info", "Info"


Severity.COLOURS = {"critical": "critical", "warning": "warning", "info": "info"}  # type: ignore[attr-defined]
# Sort order in SQL: the severity text does not sort by gravity, so a rank column is stored.
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


class FindingQuerySet(models.QuerySet):
    def open(self) -> FindingQuerySet:
        return self.filter(resolved_at__isnull=True)

    def stuck_order(self) -> FindingQuerySet:
        """Most severe first, then oldest (``since``; unknown start last), then stable by pk."""
        return self.order_by("severity_rank", F("since").asc(nulls_last=True), "first_seen", "pk")


class Finding(models.Model):
    """One diagnosis of one object, open until the diagnosis stops reporting it.

    ``fingerprint`` = category + main object (its kind and ``uid``; ``kind/namespace/name``
    when the object is not stored): at most one open row per cluster and fingerprint, so a
    re-sync updates the open row instead of adding one, and a claim deleted and re-created
    under the same name is a new finding.
    ``involved``: the diagnosis' ``objects`` as ``[{kind, namespace, name}]`` (named so to
    leave ``Finding.objects`` to the manager), the main one first and copied into
    ``kind``/``namespace``/``name`` for filtering. ``claim``: the stored ResourceClaim among
    the objects (None when it does not exist, e.g. ``claim_not_found``).
    ``node_name``: the Node among the objects, else the claim's allocated node.
    ``since``: when the condition began (from the objects), ``first_seen``/``last_seen``:
    first and latest diagnosis that reported it, ``last_seen`` moving only when the finding
    changed. ``resolved_at``: first diagnosis that no longer reported it.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="findings")
    category = models.CharField(max_length=64, choices=Category.choices)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    severity_rank = models.PositiveSmallIntegerField(default=0, help_text="0 = critical")
    summary = models.TextField()
    next_action = models.TextField(blank=True)
    involved = models.JSONField(default=list, help_text="[{kind, namespace, name}], main object first")
    # Cluster text (object names a finding quotes may come from references nothing validated):
    # text columns, so no length refuses the finding.
    kind = models.TextField(blank=True)
    namespace = models.TextField(blank=True)
    name = models.TextField(blank=True)
    claim = models.ForeignKey(
        ResourceClaim, on_delete=models.SET_NULL, null=True, blank=True, related_name="findings",
        help_text="kept as history when the claim row goes: the object columns still name it",
    )
    node_name = models.TextField(blank=True)
    since = models.DateTimeField(null=True, blank=True)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    evidence = models.JSONField(default=dict)
    fingerprint = models.TextField()
    uid = models.TextField(blank=True, help_text="uid of the main object (empty when it is not stored)")
    resolved_at = models.DateTimeField(null=True, blank=True)

    objects = FindingQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "fingerprint"], condition=Q(resolved_at__isnull=True),
                name="finding_open_fingerprint_unique",
            ),
            models.CheckConstraint(
                condition=Q(category__in=list(CATEGORIES)), name="finding_category_known",
            ),
        ]
        indexes = [
            # The stuck queue: open findings, most severe then oldest.
            models.Index(
                fields=["severity_rank", "since"], condition=Q(resolved_at__isnull=True),
                name="finding_open_queue",
            ),
            models.Index(fields=["cluster", "resolved_at"], name="finding_cluster_open"),
            models.Index(fields=["cluster", "kind", "namespace", "name"], name="finding_object"),
            models.Index(fields=["cluster", "node_name"], name="finding_node"),
        ]

    def __str__(self) -> str:
        return f"{self.category} {self.object_label}"

    @property
    def object_label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    @property
    def severity_colour(self) -> str:
        return Severity.colour(self.severity)

    @property
    def category_label(self) -> str:
        return _label(self.category)

    def get_runbook_url(self) -> str:
        return reverse("claims:runbook", args=[self.category])


class TransitionField(models.TextChoices):
    STATE = "state", "Claim state"
    FINDING = "finding", "Finding"


class ClaimTransition(models.Model):
    """A change, as a row (like healthchecks' ``Flip``): a claim's state or a finding.

    ``field=state``: ``old``/``new`` are ``ClaimState`` values ("" = not seen before /
    gone). ``field=finding``: ``new`` is the category that appeared, ``old`` the one that
    resolved. ``claim_uid`` is "" for findings about other objects (a node, a pod without
    claim); ``namespace``/``name`` then name that object. Rows outlive the claim.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="claim_transitions")
    claim_uid = models.TextField(blank=True)
    namespace = models.TextField(blank=True)
    name = models.TextField()
    field = models.CharField(max_length=16, choices=TransitionField.choices)
    old = models.CharField(max_length=64, blank=True)
    new = models.CharField(max_length=64, blank=True)
    reason = models.TextField(blank=True)
    observed_at = models.DateTimeField()
    finding = models.ForeignKey(
        Finding, on_delete=models.SET_NULL, null=True, blank=True, related_name="transitions",
    )

    class Meta:
        ordering = ["observed_at", "pk"]
        indexes = [
            models.Index(fields=["cluster", "claim_uid", "observed_at"], name="transition_claim"),
            models.Index(fields=["cluster", "namespace", "name"], name="transition_object"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} {self.field}: {self.old or '∅'} -> {self.new or '∅'}"


class ClaimStateSeen(models.Model):
    """The last state the diagnosis saw per claim uid (the sync has already overwritten the
    ResourceClaim row when the hook runs, so the previous state must be kept here)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="claim_states_seen")
    uid = models.TextField()
    namespace = models.TextField()
    name = models.TextField()
    state = models.CharField(max_length=16)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="claimstateseen_cluster_uid")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} {self.state}"
