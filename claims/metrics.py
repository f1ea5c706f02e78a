"""Prometheus metric families of the claims app, registered with ``inventory.metrics``.

``claimscope_stuck_findings{cluster,category,severity}``: open diagnosis findings
(``Finding.resolved_at`` is null), counted in one GROUP BY. The model is looked up through
the app registry, so the scrape keeps working (empty) before the Finding model exists.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.apps import apps
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

# Which column says when a finding opened, when the model has one (first match wins).
OPENED_FIELDS = ("first_seen", "first_seen_at", "opened_at", "created_at", "created", "observed_at")
REQUIRED_FIELDS = ("cluster", "category", "severity", "resolved_at")


def _finding_model():
    try:
        model = apps.get_model("claims", "Finding")
    except LookupError:
        return None
    names = {f.name for f in model._meta.get_fields()}
    return model if all(n in names for n in REQUIRED_FIELDS) else None


def _opened_field(model) -> str | None:
    names = {f.name for f in model._meta.get_fields()}
    return next((n for n in OPENED_FIELDS if n in names), None)


def collect() -> Iterator[Metric]:
    """Open findings by cluster, category and severity, and the age of the oldest per group."""
    stuck = GaugeMetricFamily(
        "claimscope_stuck_findings", "Open diagnosis findings (stuck claims and their causes)",
        labels=["cluster", "category", "severity"],
    )
    oldest = GaugeMetricFamily(
        "claimscope_stuck_findings_oldest_seconds", "Seconds since the oldest open finding of the group opened",
        labels=["cluster", "category", "severity"],
    )
    model = _finding_model()
    if model is not None:
        opened = _opened_field(model)
        aggregates = {"n": Count("pk")}
        if opened:
            aggregates["first"] = Min(opened)
        rows = (
            model.objects.filter(resolved_at__isnull=True)
            .values("cluster__name", "category", "severity")
            .annotate(**aggregates)
            .order_by()
        )
        now = timezone.now()
        for r in rows:
            labels = [r["cluster__name"], str(r["category"]), str(r["severity"])]
            stuck.add_metric(labels, r["n"])
            if r.get("first") is not None:
                oldest.add_metric(labels, max(0.0, (now - r["first"]).total_seconds()))
    yield stuck
    yield oldest
