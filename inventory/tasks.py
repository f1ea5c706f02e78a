"""Celery tasks: thin callers of ``inventory.runs.run_sync`` (a sync) and of the metrics poll.

Tasks take ids, never model instances; a dispatcher run by beat enqueues one sync per
cluster whose own interval has passed, so each cluster syncs on its own schedule. A live
cluster is read as deltas (``inventory.watch``: watches resumed from the stored
``WatchCursor``s for ``KUBE_WATCH_SECONDS``); the cursors are stored in the sync's own
transaction. One sync per cluster at a time (``inventory.locks``): the dispatcher never
queues a sync while one is queued or running, and a sync that finds the cluster busy waits
``SYNC_LOCK_WAIT_SECONDS`` and then refuses with a message.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

import config.celery  # noqa: F401 - the app these tasks bind to (config/__init__ no longer loads it)

from . import locks
from .models import Cluster, SourceKind, SyncRun, SyncStatus
from .runs import run_sync
from .sync import close_dead_runs

log = logging.getLogger(__name__)


@shared_task(name="inventory.sync_cluster", soft_time_limit=240, time_limit=300, ignore_result=True)
def sync_cluster_task(cluster_id: int, queued: str = "") -> str:
    cluster = Cluster.objects.get(pk=cluster_id)
    started = timezone.now()
    try:
        return run_sync(cluster, queued=queued).status
    except locks.SyncBusy as exc:
        log.info("%s", exc)  # the sync that holds the cluster records its own run
        if queued:
            locks.release(cluster_id, queued)
        return "busy"
    except Exception as exc:
        if queued:
            locks.release(cluster_id, queued)
        now = timezone.now()
        SyncRun.objects.create(cluster=cluster, source=cluster.source_kind, started=started, finished=now,
                               duration_ms=int((now - started).total_seconds() * 1000),
                               status=SyncStatus.FAILED, error=str(exc))
        Cluster.objects.filter(pk=cluster_id).update(last_sync_at=now, last_sync_status=SyncStatus.FAILED)
        return SyncStatus.FAILED


@shared_task(name="inventory.dispatch_due_syncs", ignore_result=True)
def dispatch_due_syncs() -> int:
    """Enqueue a sync for every enabled cluster whose interval has passed and that no sync
    holds (queued or running: ``locks.mark_queued``). A run left ``running`` by a dead worker
    is closed first, so it neither blocks nor shows as running."""
    now = timezone.now()
    due = 0
    for c in Cluster.objects.filter(enabled=True):
        if c.source_kind == SourceKind.SNAPSHOT and c.last_sync_status == SyncStatus.OK:
            continue  # a snapshot does not change by itself
        if c.last_sync_at is None or c.last_sync_at + timedelta(seconds=c.sync_interval_seconds) <= now:
            if locks.holder_of(c.pk):
                continue  # a sync is queued or running: never a second one
            close_dead_runs(c)
            token = locks.mark_queued(c.pk)
            if not token:
                continue
            try:
                sync_cluster_task.delay(c.pk, token)
            except Exception:
                locks.release(c.pk, token)
                raise
            due += 1
    return due


@shared_task(
    name="inventory.poll_metrics", bind=True, soft_time_limit=20, time_limit=30, max_retries=1, ignore_result=True
)
def poll_metrics(self, cluster_id: int, at: str | None = None) -> dict[str, int] | str:
    """Latest DCGM values of one cluster from its Prometheus into ``Device.metrics``.

    ``at``: ISO 8601 evaluation time (tests and replays of old data); default Prometheus's now.
    A failure is recorded in ``Cluster.metrics_error`` (old values kept); only transient ones
    (timeout, refused, 429, 5xx) are retried once, the next beat tick polls again anyway.
    """
    from datetime import datetime

    from .prometheus import MetricsUnavailable
    from .telemetry import is_transient, poll_cluster

    cluster = Cluster.objects.get(pk=cluster_id)
    when = datetime.fromisoformat(at.replace("Z", "+00:00")) if at else None
    try:
        return poll_cluster(cluster, at=when)
    except MetricsUnavailable as exc:
        if is_transient(exc) and not self.request.is_eager:
            raise self.retry(exc=exc, countdown=5) from exc
        return "unavailable"


@shared_task(name="inventory.dispatch_metric_polls", ignore_result=True)
def dispatch_metric_polls() -> int:
    """Enqueue ``inventory.poll_metrics`` for every enabled cluster that has a Prometheus."""
    from .telemetry import prometheus_url_for

    n = 0
    for c in Cluster.objects.filter(enabled=True):
        if prometheus_url_for(c):
            poll_metrics.delay(c.pk)
            n += 1
    return n
