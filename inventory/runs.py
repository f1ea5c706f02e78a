"""Running one sync: the source a Cluster row names, the cluster's lease, and the analyses
that follow the reconcile inside its transaction.

What the Celery tasks (``inventory.tasks``) and the ``sync_cluster`` command both call. No Celery
here: a command that reads a snapshot starts without importing it (a fifth of its start-up).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from . import locks
from .models import Cluster, SourceKind, SyncRun, WatchCursor
from .sources import SourceError, connect, open_source
from .sync import sync_cluster

log = logging.getLogger(__name__)


def _setting(name: str, default):
    """A setting of the live reads (``config/settings.py``), else ``default`` (settings of
    another project that lack it)."""
    return getattr(settings, name, default)


def stored_cursors(cluster: Cluster) -> dict:
    """list key -> ``watch.Cursor`` as the last good sync stored them."""
    from .watch import Cursor

    return {t: Cursor(rv, at) for t, rv, at in
            WatchCursor.objects.filter(cluster=cluster).values_list("target", "resource_version", "listed_at")}


def source_for(cluster: Cluster, *, keep_open: bool = False):
    """The source a Cluster row names (credentials stay in files, never in the database):
    a snapshot, or a live cluster read as deltas from its stored cursors.

    Settings (seconds unless said): ``KUBE_REQUEST_TIMEOUT`` (one request's overall deadline),
    ``KUBE_WATCH_SECONDS`` (how long a poll's watches run, default 5), ``KUBE_RELIST_SECONDS``
    (full relist period, default 3600), ``KUBE_READ_DEADLINE_SECONDS`` (the whole read,
    default 200, under the task's 240 s soft limit), ``KUBE_RETRY_ATTEMPTS`` (tries per
    request, default 4), ``KUBE_RETRY_SECONDS`` (retry budget per request, default 60)."""
    if cluster.source_kind == SourceKind.SNAPSHOT:
        return open_source(cluster.source_kind, snapshot_path=cluster.snapshot_path)
    if cluster.source_kind not in (SourceKind.KUBECONFIG, SourceKind.IN_CLUSTER):
        raise SourceError(f"unknown source kind {cluster.source_kind!r}")
    from .kubehttp import KubeHTTP, RetryPolicy
    from .watch import WatchSource

    api, description = connect(
        kubeconfig=cluster.kubeconfig_path or settings.KUBECONFIG,
        context=cluster.kube_context or settings.KUBE_CONTEXT,
        in_cluster=cluster.source_kind == SourceKind.IN_CLUSTER,
    )
    retry = RetryPolicy(attempts=int(_setting("KUBE_RETRY_ATTEMPTS", 4)), total=float(_setting("KUBE_RETRY_SECONDS", 60)))
    http = KubeHTTP(api, timeout=settings.KUBE_REQUEST_TIMEOUT, retry=retry)
    return WatchSource(
        http, description=f"watch:{description}", cursors=stored_cursors(cluster), now=timezone.now(),
        relist_seconds=float(_setting("KUBE_RELIST_SECONDS", 3600)), watch_seconds=float(_setting("KUBE_WATCH_SECONDS", 5)),
        page_size=settings.KUBE_PAGE_SIZE, deadline_seconds=float(_setting("KUBE_READ_DEADLINE_SECONDS", 200)),
        keep_open=keep_open,
    )


def store_cursors(cluster: Cluster, read) -> int:
    """Write where each list of a delta read got to (``ReadResult.cursors``), inside the
    sync's transaction, by the rule of ``watch.CursorUpdate``: a read with any problem moves
    only the cursors of lists that brought nothing, so a later sync reads the rest again.
    Returns the number of cursors written."""
    cursors = getattr(read, "cursors", None)
    if not cursors:
        return 0
    changes = getattr(read, "changes", None)
    incomplete = bool(read.errors) or bool(getattr(changes, "incomplete", False))
    have = {c.target: c for c in WatchCursor.objects.filter(cluster=cluster)}
    now = getattr(read, "read_at", None) or timezone.now()
    create, update = [], []
    for key, up in sorted(cursors.items()):
        if not up.clean or not (up.resource_version or up.listed) or (incomplete and not up.quiet):
            continue  # (a listed cursor without a resourceVersion: an optional kind not served)
        row = have.get(key)
        if row is None:
            create.append(WatchCursor(cluster=cluster, target=key, resource_version=up.resource_version,
                                      listed_at=now if up.listed else None))
        elif row.resource_version != up.resource_version or up.listed:
            row.resource_version = up.resource_version
            if up.listed:
                row.listed_at = now
            row.updated_at = timezone.now()
            update.append(row)
    WatchCursor.objects.bulk_create(create)
    WatchCursor.objects.bulk_update(update, ["resource_version", "listed_at", "updated_at"])
    return len(create) + len(update)


def analysis_due(cluster: Cluster, changed: bool, now) -> bool:
    """Must the whole-cluster analyses (diagnosis, readiness) run after this sync?

    Always when the sync changed something. When nothing changed, a snapshot gives the same
    answer again (its ``now`` is its own newest timestamp), so never; a live cluster is
    re-analysed every ``ANALYSIS_REFRESH_SECONDS``, because time alone moves claims past the
    pending and deleting thresholds.
    """
    if changed or cluster.analyzed_at is None:
        return True
    if cluster.source_kind == SourceKind.SNAPSHOT:
        return False
    return (now - cluster.analyzed_at).total_seconds() >= settings.ANALYSIS_REFRESH_SECONDS


def after_read_hooks(cluster, read) -> list[str]:
    """Work that follows a reconcile, inside the sync's transaction: the inventory's own
    (telemetry from snapshot scrapes) always, the other apps' analyses when ``analysis_due``.

    Each hook runs in a savepoint: one that fails leaves no half-written rows, the others
    still run, and its failure is returned (``app: error``) for the run to report; a hook may
    also return parts of its analysis that failed while the rest was stored. After any
    failure ``analyzed_at`` is cleared, so the next sync analyses again."""
    from django.apps import apps
    from django.db import transaction

    store_cursors(cluster, read)  # with the data they describe, in the same transaction
    now = timezone.now()
    due = analysis_due(cluster, getattr(read, "changed", True), now)
    # Never analysed, or time alone may have moved the answer: every analysis runs.
    forced = analysis_due(cluster, False, now)
    read.analyses_forced = forced  # hooks that gate parts of their work on the change set read it
    changes = getattr(read, "changes", None)
    failed: list[str] = []
    for app in apps.get_app_configs():
        hook = getattr(app, "after_sync", None)
        if hook is None or not (due or app.label == "inventory"):
            continue
        kinds = getattr(app, "analysis_kinds", None)  # what the app's analyses read
        if kinds is not None and not forced and changes is not None and not changes.touches(kinds) and not read.prom:
            continue  # nothing it depends on changed: its stored results stand
        try:
            with transaction.atomic():
                problems = hook(cluster, read)
        except Exception as exc:  # reported on the run; the inventory itself is stored
            log.exception("%s analysis of cluster %s failed", app.label, cluster.name)
            failed.append(f"{app.label}: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        # Parts of an analysis that failed while the rest was stored (a diagnosis rule).
        failed.extend(f"{app.label}: {p}" for p in (problems or ()))
    if due and not failed:
        Cluster.objects.filter(pk=cluster.pk).update(analyzed_at=now)
        cluster.analyzed_at = now
    elif failed:
        Cluster.objects.filter(pk=cluster.pk).update(analyzed_at=None)
        cluster.analyzed_at = None
    return failed


def run_sync(cluster: Cluster, *, wait: float | None = None, queued: str = "", source=None) -> SyncRun:
    """Open the cluster's source and sync it, holding the cluster's lease (``inventory.locks``).

    Raises ``SourceError`` when the source cannot be opened and ``locks.SyncBusy`` (a
    ``SourceError``) when another sync holds the cluster for longer than ``wait`` seconds.
    ``queued``: the dispatcher's marker this sync takes the lease over from."""
    with locks.sync_lease(cluster, wait=wait, take_over=queued):
        return sync_cluster(cluster, source if source is not None else source_for(cluster), after_read=after_read_hooks)
