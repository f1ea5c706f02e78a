"""``manage.py watch_clusters``: keep the watches of live clusters open and apply what arrives.

The long-running watch mode (docs/architecture.md, "Live clusters"): per enabled live
cluster, one watch per list stays open (``inventory.watch.WatchSource(keep_open=True)``);
every ``--interval`` seconds the events that arrived are applied through the same sync as
Celery's polls (``inventory.sync.sync_cluster``, with the analyses), so pages are fresh
within seconds. The process holds each cluster's lease (``inventory.locks``) while it watches
it, so beat's dispatcher queues no poll of that cluster meanwhile; a cluster whose lease
another sync holds is tried again later. A sync that does not end ``ok`` drops the open
watches of its cluster; they are opened again from the stored cursors, so nothing a failed
sync did not store is skipped.
"""

from __future__ import annotations

import logging
import signal
import time
from pathlib import Path

from django.core.management.base import BaseCommand

from inventory import locks
from inventory.models import Cluster, SourceKind, SyncStatus
from inventory.runs import after_read_hooks, source_for
from inventory.sources import SourceError
from inventory.sync import sync_cluster

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Keep watches of live clusters open and apply their changes every few seconds."

    def add_arguments(self, parser):
        parser.add_argument("--cluster", action="append", default=[], help="only this cluster (repeatable)")
        parser.add_argument("--interval", type=float, default=1.0, help="seconds between applying what arrived")
        parser.add_argument("--checkpoint", type=float, default=60.0,
                            help="sync at least this often (stores cursors moved by bookmarks, refreshes analyses)")
        parser.add_argument("--max-seconds", type=float, default=0.0, help="stop after this long (0: run until stopped)")
        parser.add_argument("--heartbeat", default="",
                            help="file touched every round (liveness probes check its age); '' for none")

    def handle(self, *args, **opts):
        self.stop = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                signal.signal(sig, self._on_signal)
            except ValueError:  # not the main thread (tests)
                pass
        self.watch(names=opts["cluster"], interval=opts["interval"], checkpoint=opts["checkpoint"],
                   max_seconds=opts["max_seconds"], heartbeat=opts["heartbeat"])

    def _on_signal(self, *_):
        self.stop = True

    def watch(self, *, names=(), interval=1.0, checkpoint=60.0, max_seconds=0.0, heartbeat: str = "") -> None:
        sessions: dict[int, tuple] = {}  # cluster pk -> (source, holder, last sync monotonic)
        end = time.monotonic() + max_seconds if max_seconds else None
        self.stop = getattr(self, "stop", False)
        try:
            while not self.stop and (end is None or time.monotonic() < end):
                started = time.monotonic()
                clusters = Cluster.objects.filter(enabled=True).exclude(source_kind=SourceKind.SNAPSHOT)
                if names:
                    clusters = clusters.filter(name__in=names)
                wanted = {c.pk: c for c in clusters}
                for pk in [pk for pk in sessions if pk not in wanted]:
                    self._drop(pk, sessions)
                for cluster in wanted.values():
                    self._step(cluster, sessions, checkpoint)
                if heartbeat:
                    Path(heartbeat).touch()
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        finally:
            for pk in list(sessions):
                self._drop(pk, sessions)

    def _step(self, cluster: Cluster, sessions: dict, checkpoint: float) -> None:
        if cluster.pk not in sessions:
            holder = locks.new_holder()
            if not locks.try_acquire(cluster.pk, holder):
                return  # a poll or another watcher has it; try again next round
            try:
                source = source_for(cluster, keep_open=True)
            except SourceError as exc:
                log.warning("cannot watch %s: %s", cluster.name, exc)
                locks.release(cluster.pk, holder)
                return
            sessions[cluster.pk] = (source, holder, 0.0)
        source, holder, last = sessions[cluster.pk]
        if not (source.pending() or time.monotonic() - last >= checkpoint):
            return
        if not locks.renew(cluster.pk, holder):
            self._drop(cluster.pk, sessions)  # the lease expired and was taken: stand back
            return
        run = sync_cluster(cluster, source, after_read=after_read_hooks)
        sessions[cluster.pk] = (source, holder, time.monotonic())
        self.stdout.write(f"cluster {cluster.name}: {run.status} in {run.duration_ms} ms")
        read = source.last_read
        stored = run.status != SyncStatus.FAILED and read is not None and not read.errors and not getattr(
            getattr(read, "changes", None), "incomplete", True)
        if not stored:
            # Events drained into a sync that did not store them all: open the watches again
            # from the stored cursors, so they are read again. (An analysis that failed after
            # the inventory was stored is not such a case.)
            self._drop(cluster.pk, sessions)

    def _drop(self, pk: int, sessions: dict) -> None:
        source, holder, _ = sessions.pop(pk)
        source.close()
        locks.release(pk, holder)
