"""Prometheus ``/metrics``: gauges computed from the database at scrape time.

Why from the database and not in-process counters: web, worker and beat are separate
processes (several gunicorn workers too), and what an alert needs (stuck claims, sync age)
is already in the tables. Each scrape runs a few GROUP BY queries, bounded by the number of
clusters x states/products, never by the number of objects.

Apps that inventory must not import (claims, migration) add their own metric families with
``register_collector(fn)`` from ``AppConfig.ready()``. A collector that raises is skipped and
counted in ``claimscope_collector_errors{collector}``, so one broken table does not blank the
whole scrape.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

from django.contrib.auth.decorators import login_not_required
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

CollectorFn = Callable[[], Iterable[Metric]]
_collectors: list[CollectorFn] = []


def register_collector(fn: CollectorFn) -> CollectorFn:
    """Add ``fn`` (no arguments, yields metric families) to every scrape. Idempotent; usable as a decorator."""
    if fn not in _collectors:
        _collectors.append(fn)
    return fn


def registered_collectors() -> tuple[CollectorFn, ...]:
    return tuple(_collectors)


def _name(fn: CollectorFn) -> str:
    return f"{fn.__module__}.{getattr(fn, '__qualname__', repr(fn))}"


class DatabaseCollector(Collector):
    """Runs every registered collector function on each scrape."""

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily(
            "claimscope_collector_errors", "1 when a metrics collector failed on this scrape", labels=["collector"]
        )
        for fn in registered_collectors():
            try:
                families = list(fn())  # materialize so a failure part-way emits nothing partial
            except Exception:  # one failing collector must not hide the others
                log.exception("metrics collector %s failed", _name(fn))
                errors.add_metric([_name(fn)], 1)
                continue
            errors.add_metric([_name(fn)], 0)
            yield from families
        yield errors


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(DatabaseCollector())


@never_cache
@login_not_required
def metrics_view(request):
    """Prometheus text exposition of every registered collector (no login: scrape targets are
    usually protected by network policy; the values are counts, no object names)."""
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


@register_collector
def inventory_metrics() -> Iterator[Metric]:
    """Claims by state, devices allocated/free, sync health per cluster (4 queries)."""
    from .models import AllocationResult, Cluster, Device, ResourceClaim, SyncRun, SyncStatus

    claims = GaugeMetricFamily("claimscope_claims", "ResourceClaims by derived state", labels=["cluster", "state"])
    for r in ResourceClaim.objects.values("cluster__name", "state").annotate(n=Count("pk")).order_by():
        claims.add_metric([r["cluster__name"], r["state"]], r["n"])
    yield claims

    devices = GaugeMetricFamily(
        "claimscope_devices",
        "ResourceSlice devices by product, MIG profile, type and allocation status",
        labels=["cluster", "driver", "product", "profile", "type", "status"],
    )
    allocated = Exists(AllocationResult.objects.filter(device=OuterRef("pk")))
    rows = (
        Device.objects.annotate(is_allocated=allocated)
        .values("cluster__name", "driver", "product_name", "profile", "type", "is_allocated")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for r in rows:
        status = "allocated" if r["is_allocated"] else "free"
        devices.add_metric(
            [r["cluster__name"], r["driver"], r["product_name"], r["profile"], r["type"], status], r["n"]
        )
    yield devices

    ok = [SyncStatus.OK, SyncStatus.PARTIAL]
    runs = SyncRun.objects.filter(cluster=OuterRef("pk"))
    last_ok = runs.filter(status__in=ok).order_by("-started")
    clusters = Cluster.objects.annotate(
        last_ok_started=Subquery(last_ok.values("started")[:1]),
        last_ok_finished=Subquery(last_ok.values("finished")[:1]),
        last_duration_ms=Subquery(runs.exclude(status=SyncStatus.RUNNING).order_by("-started").values("duration_ms")[:1]),
        failed=Count("sync_runs", filter=Q(sync_runs__status=SyncStatus.FAILED)),
        consecutive_failed=Count(
            "sync_runs",
            filter=Q(sync_runs__status=SyncStatus.FAILED)
            & (Q(last_ok_started__isnull=True) | Q(sync_runs__started__gt=F("last_ok_started"))),
        ),
    ).order_by("name")

    now = timezone.now()
    labels = ["cluster", "source"]
    enabled = GaugeMetricFamily("claimscope_cluster_enabled", "1 when the cluster is synced on schedule", labels=labels)
    age = GaugeMetricFamily(
        "claimscope_sync_age_seconds",
        "Seconds since the last successful (ok or partial) sync finished; absent when never",
        labels=labels,
    )
    last_success = GaugeMetricFamily(
        "claimscope_sync_last_success_timestamp_seconds", "Unix time of the last successful sync", labels=labels
    )
    duration = GaugeMetricFamily(
        "claimscope_sync_last_duration_seconds", "Duration of the last finished sync", labels=labels
    )
    failures = GaugeMetricFamily(
        "claimscope_sync_failures", "Failed sync runs kept in the history (SyncRun rows)", labels=labels
    )
    consecutive = GaugeMetricFamily(
        "claimscope_sync_consecutive_failures", "Failed sync runs since the last successful one", labels=labels
    )
    status = GaugeMetricFamily(
        "claimscope_sync_last_status", "1 for the status of the cluster's last sync", labels=[*labels, "status"]
    )
    for c in clusters:
        lv = [c.name, c.source_kind]
        enabled.add_metric(lv, 1 if c.enabled else 0)
        if c.last_ok_finished:
            age.add_metric(lv, max(0.0, (now - c.last_ok_finished).total_seconds()))
            last_success.add_metric(lv, c.last_ok_finished.timestamp())
        if c.last_duration_ms is not None:
            duration.add_metric(lv, c.last_duration_ms / 1000)
        failures.add_metric(lv, c.failed)
        consecutive.add_metric(lv, c.consecutive_failed)
        if c.last_sync_status:
            status.add_metric([*lv, c.last_sync_status], 1)
    yield from (enabled, age, last_success, duration, failures, consecutive, status)
