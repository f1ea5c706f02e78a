"""Reconcile what a source read into the database: the one sync function.

``sync_cluster(cluster, source)`` is called by the Celery task and by the
``sync_cluster`` management command alike. It reconciles by Kubernetes ``uid`` per cluster
(``inventory.reconcile``): creates new objects, updates those whose ``resourceVersion``
changed, and deletes vanished ones, in batches, in one transaction, while the source is still
being read. Objects whose ``resourceVersion`` is unchanged are neither decoded nor rewritten,
so a no-change re-sync writes no inventory rows.

Safety rule: when the read had any error (a failed page, a malformed object, an unknown API
version), the run is ``partial``: what was read is created/updated, nothing is deleted.
Deletion also only ever touches kinds the source listed completely.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import transaction
from django.utils import timezone

from . import queries
from .bulk import DeferredInserts
from .models import Cluster, SyncRun, SyncStatus
from .reconcile import Reconcile
from .sources import ReadResult, Source, SourceError

log = logging.getLogger(__name__)


def apply_read(cluster: Cluster, read: ReadResult) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Reconcile one ``ReadResult`` into the database, streaming its objects kind by kind.

    Returns (counts per kind, errors). Raises ``SourceError`` when the source fails while
    being read (the transaction is rolled back: nothing changes).
    """
    with _fewer_collections():
        # Inserts end inside the transaction (DeferredInserts exits first).
        with transaction.atomic(), DeferredInserts() as later:
            rec = Reconcile(cluster, later)
            for item in read.items():
                rec.add(item)
            return rec.finish(read)


# Syncs running at once in this process (threads): the collector settings are process-wide.
_collections_lock = threading.Lock()
_collections_users = 0
_collections_saved: tuple[int, ...] = ()


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Fewer cycle-collector passes while at least one sync runs in this process.

    A sync allocates and drops hundreds of thousands of small objects; each pass of the
    cycle collector would also walk every long-lived object of Django and the libraries.
    Frozen objects are left out of those passes (about a tenth of a full sync's time), and
    rarer passes skip most of the rest (the sync's own objects form no cycles; refcounts
    free them): 43 full passes in a 1,000-node sync with the default thresholds, 0 here.
    The first sync to begin saves the settings and the last to end restores them, so syncs
    that overlap (threads) in any order leave them as they were."""
    global _collections_users, _collections_saved
    with _collections_lock:
        if _collections_users == 0:
            _collections_saved = gc.get_threshold()
            gc.freeze()
            t = _collections_saved
            gc.set_threshold(max(t[0], 50_000), max(t[1], 20), max(t[2], 20))
        _collections_users += 1
    try:
        yield
    finally:
        with _collections_lock:
            _collections_users -= 1
            if _collections_users == 0:
                gc.set_threshold(*_collections_saved)
                gc.unfreeze()


def sync_cluster(cluster: Cluster, source: Source, *, after_read: Callable[[Cluster, ReadResult], None] | None = None) -> SyncRun:
    """Sync ``cluster`` from ``source`` and record a ``SyncRun``.

    Never raises for source or data problems: a source that cannot be read gives a
    ``failed`` run (nothing changed); a read with errors gives a ``partial`` run (nothing
    deleted). ``after_read`` (e.g. the telemetry join of snapshot scrapes) runs after a
    successful reconcile with the same ``ReadResult``.
    """
    started = timezone.now()
    t0 = time.monotonic()
    run = SyncRun.objects.create(cluster=cluster, source=source.description[:1200], started=started)
    try:
        read = source.read()
        counts, errors = apply_read(cluster, read)
        if read.skipped:
            counts["skipped"] = dict(read.skipped)
        run.counts = counts
        run.errors = errors[:200]
        run.status = SyncStatus.PARTIAL if errors else SyncStatus.OK
        if errors:
            run.error = f"{len(errors)} problem(s); nothing was deleted. First: {errors[0]}"
        if read.server_version:
            cluster.server_version = read.server_version
        # The hooks read what they need from the database: let the parsed payload go first,
        # so a whole-cluster analysis does not hold two copies of the fleet at once.
        read.objects = []
        read.changed = bool(errors) or any(
            c.get(k) for c in counts.values() for k in ("created", "updated", "deleted")
        )
        if after_read is not None:
            after_read(cluster, read)
    except SourceError as exc:
        run.status = SyncStatus.FAILED
        run.error = str(exc)
    except Exception as exc:
        log.exception("sync of %s failed", cluster.name)
        run.status = SyncStatus.FAILED
        run.error = f"{type(exc).__name__}: {exc}"
    run.finished = timezone.now()
    run.duration_ms = int((time.monotonic() - t0) * 1000)
    run.save()
    cluster.last_sync_at = run.finished
    cluster.last_sync_status = run.status
    fields = ["last_sync_at", "last_sync_status", "server_version"]
    changed = run.status != SyncStatus.FAILED and getattr(read, "changed", True)
    if changed:
        cluster.data_changed_at = run.finished
        fields.append("data_changed_at")
    cluster.save(update_fields=fields)
    if changed:
        try:
            queries.warm_overview(cluster)
        except Exception:  # a cache outage must not fail a sync that stored its data
            log.exception("warming the overview of %s failed", cluster.name)
    return run
