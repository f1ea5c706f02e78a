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

import contextvars
import gc
import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import transaction
from django.utils import timezone

from . import exports, queries, stored_model
from .bulk import DeferredInserts
from .model import ClusterModel
from .models import Cluster, SyncRun, SyncStatus
from .readitem import ItemRun
from .reconcile import Reconcile, keep_known, take_known
from .sources import ReadResult, Source, SourceError

log = logging.getLogger(__name__)


def apply_read(cluster: Cluster, read: ReadResult) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Reconcile one ``ReadResult`` into the database, streaming its objects kind by kind.

    Returns (counts per kind, errors). Raises ``SourceError`` when the source fails while
    being read (the transaction is rolled back: nothing changes).
    """
    with _fewer_collections():
        # Inserts end inside the transaction (DeferredInserts exits first).
        # The cluster's state before this sync (its _finish moves data_changed_at).
        basis = cluster.stored_data_changed_at()
        with transaction.atomic(), DeferredInserts() as later:
            rec = Reconcile(cluster, later, known=take_known(cluster.pk, basis))
            for item in read.items():
                if isinstance(item, ItemRun):
                    rec.add_run(item)
                else:
                    rec.add(item)
                # Unbound at once: an unchanged item holds its text, a view of the read's
                # whole buffer (5,000 nodes: 790 MB), which the stream then frees as it ends
                # (60-70 ms) rather than this function on its return, after the read.
                item = None
            result = rec.finish(read)
        read.changes = rec.changes
        read.model = ModelAfterSync(cluster, rec, basis)  # called by the analyses that need it
        # Kept once the sync commits, by a process that syncs again.
        read.model.known = rec.known_after() if not result[1] and next_sync_follows() else None
        return result


# cluster pk -> (the cluster's data_changed_at the model matches, its model): the model of
# every cluster this process synced, so a worker's next sync applies its changes to it
# instead of reading the cluster back. A sync takes the entry out while it runs and puts it
# back only once its transaction committed (``ModelAfterSync.keep``): a rolled-back sync's changes
# never reach another sync.
_models: dict[int, tuple[object, ClusterModel]] = {}
_models_lock = threading.Lock()


class ModelAfterSync:
    """The cluster model after one sync's read, made on first call (a sync whose analyses
    all stand never builds one): the cached model with this read's changes applied when it
    matches what was stored before the sync; else this read's records when they are every
    stored object (a first sync, or one that rewrote everything); else read back."""

    def __init__(self, cluster: Cluster, rec: Reconcile, basis) -> None:
        self.cluster = cluster
        self.decoded = rec.decoded
        self.changes = rec.changes
        self.model: ClusterModel | None = None
        # Each changed object's record before this sync, when the model before it was at hand.
        self.before: dict[tuple[str, str], object] | None = None
        self.newest_before: str | None = None
        self.version_before = -1
        self.basis = basis  # the cluster's state before this sync
        # The reconcile's ``known_after()``, kept with the model once the sync commits.
        self.known: dict | None = None
        with _models_lock:
            cached = _models.pop(cluster.pk, None)
        if cached is not None and cached[0] == self.basis:
            self._apply(cached[1])
            self.model = cached[1]

    def _apply(self, model: ClusterModel) -> None:
        """Apply this sync's changes to the model of the state before it, keeping what the
        changed objects were (``changed_records``)."""
        self.newest_before = model.newest_timestamp()
        self.version_before = model.version
        before: dict[tuple[str, str], object] = {}
        for uid, record, _ in self.decoded:
            before[(record.kind, uid)] = model.records.get(record.kind, {}).get(uid)
        for kind, uids in self.changes.deleted.items():
            for uid in uids:
                before[(kind, uid)] = model.records.get(kind, {}).get(uid)
        model.apply(self.decoded, self.changes.deleted)
        self.before = before

    def changed_records(self) -> tuple[list[tuple[object, object]], str | None, int] | None:
        """((record before or None, record after or None) per object this sync created,
        updated or deleted; the newest timestamp and the model's ``version`` before it),
        once the model is made; None
        when the state before the sync was not at hand (the model was read afresh) or the
        read was incomplete (what it missed may have changed)."""
        if self.before is None or self.model is None or self.changes.incomplete:
            return None
        pairs = [(old, self.model.records.get(kind, {}).get(uid)) for (kind, uid), old in self.before.items()]
        return pairs, self.newest_before, self.version_before

    def __call__(self) -> ClusterModel:
        if self.model is None:
            fresh = ClusterModel()
            fresh.apply(self.decoded, {})
            if not (fresh.count() == len(self.decoded) == exports.stored_object_count(self.cluster)):
                # The stored model of the state before this sync, with its changes; else parse.
                fresh = stored_model.load(self.cluster.pk, self.basis, check_count=False)
                if fresh is not None:
                    self._apply(fresh)
                else:
                    fresh = exports.parse_stored_model(self.cluster)
            self.model = fresh
        self.decoded = []  # the records live on in the model
        return self.model

    def store(self, new_basis) -> str:
        """Inside the sync's transaction, after its outcome: the stored model follows
        (``stored_model.record_sync``)."""
        return stored_model.record_sync(self.cluster.pk, previous_basis=self.basis, new_basis=new_basis,
                                        changes=self.changes, model=self.model, upserts=self.decoded)

    def keep(self) -> None:
        """After the sync committed: keep the model (if one was made) and the reconcile's
        stored keys for the next sync."""
        if (self.model is None and not self.known) or not next_sync_follows():
            return
        basis = self.cluster.stored_data_changed_at()
        if self.model is not None:
            with _models_lock:
                _models[self.cluster.pk] = (basis, self.model)
        keep_known(self.cluster.pk, basis, self.known)


# False while a process runs the one sync it ends after (``one_sync``: the sync_cluster
# command): what a sync keeps or prepares for the next sync of the same process (the model,
# the stored keys, the indexes a kept diagnosis state is patched through) would be made for
# nothing (5,000 nodes: the indexes alone are about 0.5 s).
_next_sync_follows: contextvars.ContextVar[bool] = contextvars.ContextVar("next_sync_follows", default=True)


@contextmanager
def one_sync() -> Iterator[None]:
    """While open, syncs keep nothing for a later sync of this process."""
    token = _next_sync_follows.set(False)
    try:
        yield
    finally:
        _next_sync_follows.reset(token)


def next_sync_follows() -> bool:
    """May this process sync again (a worker, a test), so that what a sync keeps pays?"""
    return _next_sync_follows.get()


def held_records(cluster: Cluster, kinds: tuple[str, ...]) -> dict[str, list[object]] | None:
    """kind -> records of ``kinds`` from the model this process kept after syncing ``cluster``
    (a worker warming the overview right after its sync reads nothing back), when it matches
    the cluster's stored state; else None. Copied under the lock: a model in the cache is one
    no sync is changing (a sync takes it out first)."""
    basis = cluster.stored_data_changed_at()
    with _models_lock:
        entry = _models.get(cluster.pk)
        if entry is None or entry[0] != basis:
            return None
        return {k: list(entry[1].records.get(k, {}).values()) for k in kinds}


def forget_models() -> None:
    """Drop every cached cluster model (tests; a worker that must read clusters afresh)."""
    with _models_lock:
        _models.clear()


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


WORKER = f"{socket.gethostname()}:{os.getpid()}"


def _process_gone(worker: str) -> bool:
    """Has the process ``host:pid`` that ran a sync ended? Only this host's processes can be
    asked; for another host's, ``close_dead_runs`` goes by age."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def close_dead_runs(cluster: Cluster, now=None) -> int:
    """Close the ``running`` runs of ``cluster`` whose process died (killed, out of memory, a
    lost node): their transaction was rolled back, so nothing they read was kept. A run of
    another host is taken for dead after ``SYNC_STALE_SECONDS``. Closing one clears
    ``analyzed_at``, so this run analyses the cluster again whatever it finds changed."""
    from django.conf import settings

    now = now or timezone.now()
    stale_after = getattr(settings, "SYNC_STALE_SECONDS", 900)
    dead = []
    for run in SyncRun.objects.filter(cluster=cluster, status=SyncStatus.RUNNING).only("pk", "worker", "started"):
        if (run.worker and _process_gone(run.worker)) or (now - run.started).total_seconds() > stale_after:
            dead.append(run.pk)
    if dead:
        SyncRun.objects.filter(pk__in=dead).update(
            status=SyncStatus.FAILED, finished=now,
            error="the process running this sync ended before it finished (killed or lost); nothing it read was kept",
        )
        Cluster.objects.filter(pk=cluster.pk).update(analyzed_at=None)
        cluster.analyzed_at = None
    return len(dead)


def sync_cluster(cluster: Cluster, source: Source, *, after_read: Callable[[Cluster, ReadResult], list[str]] | None = None) -> SyncRun:
    """Sync ``cluster`` from ``source`` and record a ``SyncRun``.

    Never raises for source or data problems: a source that cannot be read gives a
    ``failed`` run (nothing changed); a read with errors gives a ``partial`` run (nothing
    deleted that the read may have missed). ``after_read`` (telemetry of snapshot scrapes,
    diagnosis, readiness) runs after the reconcile with the same ``ReadResult`` and returns
    the analyses that failed.

    The objects, everything the analyses derive from them, the run's outcome and the
    cluster's status are committed in ONE transaction: a process killed at any point leaves
    the state before the sync or the state after it, never objects with stale findings. The
    run row itself is created first (outside), so a sync in progress shows; the next sync
    closes it if its process died (``close_dead_runs``).
    """
    close_dead_runs(cluster)
    started = timezone.now()
    t0 = time.monotonic()
    run = SyncRun.objects.create(cluster=cluster, source=source.description[:1200], started=started, worker=WORKER[:300])
    read: ReadResult | None = None
    changed = False
    try:
        read = source.read()
        # The analyses too: with a whole cluster model in memory every full pass of the cycle
        # collector walks it (at 5,000 nodes seconds of a worker's first sync).
        with _fewer_collections(), transaction.atomic():
            counts, errors = apply_read(cluster, read)
            if read.server_version:
                cluster.server_version = read.server_version
            # The hooks read what they need from the database: let the parsed payload go first,
            # so a whole-cluster analysis does not hold two copies of the fleet at once.
            read.objects = []
            # A read with problems that wrote nothing changed nothing: the analyses' results stand
            # (diagnosed again, a snapshot file without its scrapes would resolve their findings).
            changed = any(c.get(k) for c in counts.values() for k in ("created", "updated", "deleted"))
            read.changed = changed
            failed_analyses = (after_read(cluster, read) if after_read is not None else None) or []
            # With the model the analyses made (a sync without them leaves the device-row counts).
            if read.model.model is not None and read.changes.touches(COUNTER_KINDS):
                pairs = read.model.changed_records()
                # A rule changed or gone: the nodes it kept off are counted again too.
                gone = [old for old, _ in (pairs[0] if pairs else ()) if old is not None and old.kind == "DeviceTaintRule"]
                counter_node_summaries(cluster, read.model.model, gone)
            if read.skipped:  # after the hooks: telemetry adds the malformed scrape lines it skipped
                counts["skipped"] = dict(read.skipped)
            problems = [*errors, *(f"analysis failed: {a}" for a in failed_analyses)]
            run.counts = counts
            run.errors = problems[:200]
            run.status = SyncStatus.PARTIAL if problems else SyncStatus.OK
            if errors:
                run.error = f"{len(errors)} problem(s) in the read; what it may have missed was not deleted. First: {errors[0]}"
            elif failed_analyses:
                run.error = f"inventory stored; {len(failed_analyses)} analysis(es) failed and will run again. First: {failed_analyses[0]}"
            _finish(cluster, run, t0, changed)
            if changed:
                read.model.store(cluster.data_changed_at)
    except SourceError as exc:
        run.status = SyncStatus.FAILED
        run.error = str(exc)
        changed = False
        _finish(cluster, run, t0, changed)
    except Exception as exc:
        log.exception("sync of %s failed", cluster.name)
        run.status = SyncStatus.FAILED
        run.error = f"{type(exc).__name__}: {exc}"
        changed = False
        _finish(cluster, run, t0, changed)
    if run.status != SyncStatus.FAILED and getattr(read, "model", None) is not None:
        read.model.keep()
    if changed:
        try:
            with _fewer_collections():
                queries.warm_overview(cluster, read)  # follows what this read changed
        except Exception:  # a cache outage must not fail a sync that stored its data
            log.exception("warming the overview of %s failed", cluster.name)
    return run


COUNTER_KINDS = frozenset({"ResourceSlice", "ResourceClaim", "DeviceTaintRule"})


# cluster pk -> (the model, weakly: one the process let go is not held on to here; the
# ResourceSlice and DeviceTaintRule records they were found from; the nodes): found again only
# when the slices or the rules changed.
_counter_nodes_seen: dict[int, tuple[weakref.ref[ClusterModel], dict, dict, frozenset[str]]] = {}

_KEEPS_OFF = ("NoSchedule", "NoExecute")


def _counter_nodes(cluster: Cluster, model: ClusterModel, slices: list, rules: list) -> frozenset[str]:
    """Nodes whose free devices only the allocation state counts right: devices drawing on
    shared counters (dynamic MIG), or kept off by a NoSchedule/NoExecute taint of their own or
    of a DeviceTaintRule that may select them (one with CEL selectors may select any)."""
    of_slices = model.records.get("ResourceSlice", {})
    of_rules = model.records.get("DeviceTaintRule", {})
    seen = _counter_nodes_seen.get(cluster.pk)
    if seen is not None and seen[0]() is model and seen[1] == of_slices and seen[2] == of_rules:
        return seen[3]
    names = _nodes_counted_from_state(slices, rules)
    _counter_nodes_seen[cluster.pk] = (weakref.ref(model), dict(of_slices), dict(of_rules), names)
    return names


def _nodes_counted_from_state(slices: list, rules: list) -> frozenset[str]:
    """``_counter_nodes`` of these slices and DeviceTaintRules."""
    rules = [r for r in rules if r.taint is not None and r.taint.effect in _KEEPS_OFF]
    return frozenset(
        s.node_name for s in slices
        if s.node_name and any(
            d.consumes_counters or (d.taints and any(t.effect in _KEEPS_OFF for t in d.taints))
            or (rules and any(r.selects(d) is not False for r in rules))
            for d in s.devices
        )
    )  # fmt: skip


def counter_node_summaries(cluster: Cluster, model: ClusterModel, old_rules: list | tuple = ()) -> int:
    """``free_count``, ``mig_count`` and ``free_gpu_count`` of the nodes whose devices draw on
    shared counters (NVIDIA's dynamic MIG publishes every possible placement) or may be kept
    off by a taint (``_counter_nodes``): what ``capacity`` says can be allocated now (taints
    and counters included) and the MIG instances that exist, not every placement the device
    rows list (``reconcile.refresh_node_summaries`` counts those). ``old_rules``:
    DeviceTaintRules as they were before this sync changed or deleted them, whose nodes are
    counted again too. Returns the rows written."""
    from . import capacity
    from .bulk import update_rows
    from .models import Node

    slices = list(model.of_kinds(["ResourceSlice"]))
    rules = list(model.of_kinds(["DeviceTaintRule"]))
    names = _counter_nodes(cluster, model, slices, rules)
    if old_rules:
        names |= _nodes_counted_from_state(slices, list(old_rules))
    if not names:
        return 0
    claims = [c for c in model.of_kinds(["ResourceClaim"]) if c.allocated]
    states = capacity.node_states(slices, claims, rules, (), nodes=names, cel_selects=queries.rule_cel(cluster, rules))
    rows = []
    columns = ["free_count", "mig_count", "free_gpu_count"]
    for pk, name, *have in Node.objects.filter(cluster=cluster, name__in=sorted(names)).values_list("pk", "name", *columns):
        st = states.get(name)
        if st is not None and have != (want := [st.free_count(), len(st.instances()), st.free_gpu_count()]):
            rows.append((pk, dict(zip(columns, want, strict=True))))
    return update_rows(Node, columns, rows)


def _finish(cluster: Cluster, run: SyncRun, t0: float, changed: bool) -> None:
    """Write the run's outcome and the cluster's sync status (inside the sync's transaction
    when it stored anything, so both commit with the data they describe)."""
    run.finished = timezone.now()
    run.duration_ms = int((time.monotonic() - t0) * 1000)
    run.save()
    cluster.last_sync_at = run.finished
    cluster.last_sync_status = run.status
    fields = ["last_sync_at", "last_sync_status", "server_version"]
    if changed:
        cluster.data_changed_at = run.finished
        fields.append("data_changed_at")
    cluster.save(update_fields=fields)
