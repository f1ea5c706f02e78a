"""Prometheus metric families of the migration app, registered with ``inventory.metrics``.

``claimscope_readiness_score{cluster}``: the newest ``ReadinessEvaluation.score`` per cluster,
as the readiness scorer stores it. Looked up through the app registry, so the scrape keeps
working (empty) before the model exists.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.apps import apps
from django.db.models import OuterRef, Subquery
from prometheus_client.core import GaugeMetricFamily, Metric

from inventory.models import Cluster

REQUIRED_FIELDS = ("cluster", "evaluated_at", "score")


def _evaluation_model():
    try:
        model = apps.get_model("migration", "ReadinessEvaluation")
    except LookupError:
        return None
    names = {f.name for f in model._meta.get_fields()}
    return model if all(n in names for n in REQUIRED_FIELDS) else None


def collect() -> Iterator[Metric]:
    """Latest readiness score and its time per cluster (one query with two subqueries)."""
    score = GaugeMetricFamily("claimscope_readiness_score", "Latest DRA migration readiness score", labels=["cluster"])
    when = GaugeMetricFamily(
        "claimscope_readiness_evaluated_timestamp_seconds", "Unix time of the latest readiness evaluation",
        labels=["cluster"],
    )
    model = _evaluation_model()
    if model is not None:
        latest = model.objects.filter(cluster=OuterRef("pk")).order_by("-evaluated_at")
        rows = Cluster.objects.annotate(
            score=Subquery(latest.values("score")[:1]), evaluated_at=Subquery(latest.values("evaluated_at")[:1])
        ).filter(evaluated_at__isnull=False).values("name", "score", "evaluated_at").order_by("name")
        for r in rows:
            if r["score"] is not None:
                score.add_metric([r["name"]], float(r["score"]))
            when.add_metric([r["name"]], r["evaluated_at"].timestamp())
    yield score
    yield when
