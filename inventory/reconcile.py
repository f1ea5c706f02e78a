"""The streaming reconcile of one read: objects in, rows written per kind in batches.

``Reconcile.add(item)`` takes each ``ReadItem`` a source yields: one whose resourceVersion is
the stored one is counted and skipped without being decoded; the others are buffered per kind
and written in batches (``FLUSH_OBJECTS``/``FLUSH_TEXT``), DeviceClasses before the slices they
classify and slices before the claims allocated from them. ``Reconcile.finish(read)`` does
what needs the whole read: nodes known only from slices, allocation results whose device came
later, deleting vanished objects (only after a read without errors, only of kinds listed
completely), matching devices again when the DeviceClasses changed, node summaries.

What to create, update and delete is decided on plain data (``inventory.decide``); the rows go
to a ``Writer`` (``inventory.writer``), the one that knows about savepoints, COPY and sequences.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from django.db.models import Q

from . import cel, decide, jsonlist, parse, queries, records, rows
from .bulk import update_rows
from .changes import ChangeSet
from .kinds import BY_KIND
from .models import (
    TYPED_MODELS,
    AllocationResult,
    Cluster,
    Device,
    DeviceClass,
    DeviceType,
    KeptChunk,
    KubeObject,
    Node,
    Pod,
    Reservation,
    ResourceClaim,
    ResourceSlice,
    SourceKind,
)
from .normalize import UnknownAPIVersion, normalize
from .readitem import NOT_SET_UP, ItemRun, ReadItem
from .snapshot import newest_timestamp
from .sources import ReadResult
from .summaries import pool_chunks
from .writer import Writer

if TYPE_CHECKING:
    from .bulk import DeferredInserts

BULK = 1000
# Slices read again at a time (about 20 KB of raw each in a large fleet).
SLICE_CHUNK = 50


@dataclass
class KindCounts:
    seen: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def _read_again(model: type, pks: set[int]) -> None:
    """Forget the stored ``resourceVersion`` of ``pks`` (stored without one of their child
    rows), so the next sync reads them again and reports the problem while it lasts."""
    update_rows(model, ["resource_version"], [(pk, {"resource_version": ""}) for pk in sorted(pks)])


def _device(row: dict[str, Any]) -> str:
    return f"device {row.get('driver', '?')}/{row.get('pool', '?')}/{row.get('name', '?')}"


def _chunks(items: list[Any], size: int = 400):
    # SQLite caps the parameters of one statement (999 before 3.32): two lists of 400 fit.
    for i in range(0, len(items), size):
        yield items[i : i + size]


@dataclass
class _KindState:
    model: type
    counts: KindCounts
    extra: Q | None = None
    existing: dict[str, tuple[int, str]] | None = None  # uid -> (pk, resourceVersion)
    held: dict[str, tuple[int, str]] | None = None  # ``existing`` as the last sync left it (``_KNOWN``)
    seen: set[str] = field(default_factory=set)
    # How many objects ``load`` found, and how many of them the read has seen: when the two
    # are equal nothing stored vanished, told without comparing every stored uid.
    loaded: int = 0
    matched: int = 0

    def rows(self, cluster: Cluster):
        """The kind's stored rows of ``cluster``, unordered: the models' default ordering made
        SQLite walk the (namespace, name) index and fetch each row from it (5,000 nodes: 1.3 s
        -> 0.2 s for every kind)."""
        return self.model.objects.filter(Q(cluster=cluster) & (self.extra or Q())).order_by()

    def load(self, cluster: Cluster) -> dict[str, tuple[int, str]]:
        if self.existing is None:
            qs = self.rows(cluster)
            held, self.held = self.held, None
            if held is not None and qs.count() == len(held):  # the count catches rows written without a sync
                self.existing = held
            else:
                self.existing = {uid: (pk, rv) for uid, pk, rv in qs.values_list("uid", "pk", "resource_version")}
            self.loaded = len(self.existing)
        return self.existing


# (object, its exact JSON text or None, identity, its record or None for a kind the product
# keeps but does not read) of one object to write.
Item = tuple[dict[str, Any], "str | None", str, Any]
# Flush a kind's buffer at this many objects or this much text: bounds the memory a sync holds
# (a 1,000-node fleet's slices are ~20 KiB of JSON each, five times that as Python objects).
FLUSH_OBJECTS = 500
FLUSH_TEXT = 2 << 20
# Written before a batch of the kind: devices are matched against the DeviceClasses read so
# far, and allocation results point at devices already stored.
FLUSH_FIRST = {"ResourceSlice": ("DeviceClass",), "ResourceClaim": ("ResourceSlice",)}


# cluster pk -> {uid: resourceVersion} of the items the last read of it skipped by their text
# (``ReadItem.keep``: pods that use no GPU). They are never stored, so the resourceVersion check
# cannot pass them; the same version of an object gets the same answer, so this process asks
# only once. A cache of decisions about the source's objects, not of the database; kept there
# too (``KeptChunk`` part "skipped"), so a command does not search every pod's text again (5,000
# nodes: 70,000 pods, 0.9 s).
_SKIPPED: dict[int, dict[str, str]] = {}
_SKIP_PART = "skipped"
_skip_codec = (msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder(dict[str, str]))


@cache
def _skip_fingerprint() -> str:
    """SHA-256 of the code that decides what a read skips: a decision of other code is not reused."""
    return hashlib.sha256((Path(__file__).resolve().parent / "kinds.py").read_bytes()).hexdigest()


def _skipped_before(cluster_pk: int) -> dict[str, str]:
    held = _SKIPPED.get(cluster_pk)
    if held is not None:
        return held
    row = KeptChunk.objects.filter(cluster_id=cluster_pk, part=_SKIP_PART, bucket=0).values_list("fingerprint", "data").first()
    if row is None or row[0] != _skip_fingerprint():
        return {}
    try:
        return _skip_codec[1].decode(bytes(row[1]))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}


def _keep_skipped(cluster_pk: int, before: dict[str, str], now: dict[str, str], decided: bool) -> None:
    """Inside the sync's transaction: the decisions of this read, in place of the last one's.
    ``decided``: the read made a decision of its own; else each of ``now`` is one of ``before``,
    and the two are equal when as many."""
    _SKIPPED[cluster_pk] = now
    if decided or len(now) != len(before):
        KeptChunk.objects.update_or_create(cluster_id=cluster_pk, part=_SKIP_PART, bucket=0, defaults={
            "fingerprint": _skip_fingerprint(), "data": _skip_codec[0].encode(now)})


# New rows of one kind whose pks ``known_after`` reads back; a kind with more is read afresh.
MAX_PKS_READ = 10_000
# cluster pk -> (its ``data_changed_at``, kind -> {uid: (pk, resourceVersion)} of its stored
# rows): what the last sync of the cluster in this process left ``_KindState.existing`` at, so a
# polling worker's next sync does not read every kind's keys back (5,000 nodes: 135,000 rows).
# Taken out when a sync begins, put back only after it committed (``keep_known``), and only the
# kinds whose every entry it knows exactly: a kind it wrote outside ``_write``, marked to be read
# again, or created more than ``MAX_PKS_READ`` rows of without their pks is left out, and read
# afresh; a row count that disagrees (rows written without a sync) has the kind read afresh too.
_KNOWN: dict[int, tuple[object, dict[str, dict[str, tuple[int, str]]]]] = {}
_known_lock = threading.Lock()


def take_known(cluster_pk: int, basis: object) -> dict[str, dict[str, tuple[int, str]]]:
    """The keys the last sync of the cluster in this process kept, when it left the cluster in
    state ``basis`` (its ``data_changed_at`` now), else {}; taken out, so no other sync uses them."""
    with _known_lock:
        entry = _KNOWN.pop(cluster_pk, None)
    return entry[1] if entry is not None and basis is not None and entry[0] == basis else {}


def keep_known(cluster_pk: int, basis: object, known: dict[str, dict[str, tuple[int, str]]] | None) -> None:
    """After a sync committed, leaving the cluster in state ``basis``: keep its
    ``Reconcile.known_after()`` for the next."""
    if known:
        with _known_lock:
            _KNOWN[cluster_pk] = (basis, known)


def forget_known() -> None:
    """Drop what this process keeps of every cluster's stored keys (tests)."""
    with _known_lock:
        _KNOWN.clear()


class Reconcile:
    """One streaming reconcile: objects arrive in any order, are written per kind in batches,
    and everything that needs the whole read (deletes, class matching against the final
    DeviceClasses, allocations to devices read later, node summaries) runs in ``finish``."""

    def __init__(self, cluster: Cluster, later: DeferredInserts | None = None,
                 known: dict[str, dict[str, tuple[int, str]]] | None = None) -> None:
        self.cluster = cluster
        self.errors: list[str] = []
        self.writer = Writer(later, self.errors)  # rows refused by the database are reported in errors
        self.had_devices: bool | None = None  # the cluster held devices when the sync began
        self.pools_written: set[tuple[str, str]] = set()  # (driver, pool) of devices written
        # Devices of changed slices a newer slice holds (``decide.DeviceChanges.older``), with
        # the generation of each slice involved: theirs once a complete read shows the holder gone.
        self.older: list[tuple[tuple[str, str, str], int, int, dict[str, Any]]] = []
        self.older_generation: dict[int, int] = {}
        # (uid, record, newest timestamp) of every object decoded: what the cluster model
        # takes from this read (``inventory.model``); timestamps only for snapshots.
        self.decoded: list[tuple[str, Any, str | None]] = []
        self.skipped: Counter[str] = Counter()  # items the read left to the sync to skip (``ReadItem.keep``)
        self._skipped_before = _skipped_before(cluster.pk)
        self._skipped_now: dict[str, str] = {}
        self._skips_decided = False
        self.stamps = cluster.source_kind == SourceKind.SNAPSHOT
        self.changes = ChangeSet()  # uids created / updated / deleted per kind, as written
        # (driver, pool) -> problems confined to that pool: they keep its slices from being
        # deleted, not the rest of the cluster's objects.
        self.pool_conflicts: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.counts: dict[str, KindCounts] = defaultdict(KindCounts)
        self.kinds: dict[str, _KindState] = {}
        self._known = known or {}  # kind -> stored keys the last sync kept (``take_known``)
        self._inexact: set[str] = set()  # kinds whose ``existing`` no longer says exactly what is stored
        self._pk_unread: dict[str, list[str]] = defaultdict(list)  # uids created without reading their pk
        self.buffers: dict[str, list[Item]] = defaultdict(list)
        self.buffered_text: dict[str, int] = defaultdict(int)
        self.node_objects: set[str] = set()
        self.slice_nodes: set[str] = set()  # nodes named by stored slices
        self.touched_nodes: set[str] = set()
        self.devices_moved = False
        self.start_classes = self._classes()
        self.classes = self.start_classes
        self._matcher_cache: dict[int, Callable[[parse.Device], list[str]]] = {}
        self.slices_by_classes: list[tuple[dict[str, list[str]], list[int]]] = []

    # -- intake -------------------------------------------------------------------------
    def add(self, item: ReadItem) -> None:
        """Take one object of the read: skipped undecoded when its ``resourceVersion`` is the
        stored one, else decoded, checked and buffered for its kind's next batch."""
        kind = item.kind
        st = self._state_for(kind)
        if item.uid in st.seen:
            return  # the same object twice in one read (e.g. relisted after a 410): once
        have = st.load(self.cluster).get(item.uid)
        if have is not None and item.resource_version and have[1] == item.resource_version:
            st.seen.add(item.uid)
            st.matched += 1
            st.counts.seen += 1
            st.counts.unchanged += 1
            return
        if item.keep is not None:
            rv = item.resource_version
            if rv and self._skipped_before.get(item.uid) == rv:
                skip = True
            else:
                self._skips_decided = True  # a decision the kept ones do not hold
                skip = not item.keep(item.raw_bytes(), namespace=item.namespace)
            if skip:
                self.skipped[kind] += 1  # not one the dashboard uses (``kinds.wanted_pod``)
                if rv:
                    self._skipped_now[item.uid] = rv
                return
        try:
            obj = item.object()
        except (jsonlist.JSONError, UnknownAPIVersion) as exc:
            self.errors.append(f"{kind} {item.name}: {exc}")
            return
        spec = BY_KIND.get(kind)
        problem = parse.name_problem(obj, namespaced=spec.namespaced if spec else True)
        if problem:
            self.errors.append(problem)
            return
        try:  # the one parse of this object: its rows and the analyses use the record
            record = records.parse_object(obj)
        except UnknownAPIVersion as exc:
            self.errors.append(f"{kind} {item.name}: {exc}")
            return
        except ValueError as exc:  # a slice or claim no API server could have served
            self.errors.append(str(exc))
            return
        st.seen.add(item.uid)
        st.matched += have is not None
        st.counts.seen += 1
        if record is not None:
            stamp = None
            if self.stamps:
                stamp = newest_timestamp([obj])
            self.decoded.append((item.uid, record, stamp))
        buf = self.buffers[kind]
        buf.append((obj, item.text, item.uid, record))
        self.buffered_text[kind] += len(item.text) if item.text else 0
        if len(buf) >= FLUSH_OBJECTS or self.buffered_text[kind] >= FLUSH_TEXT:
            self.flush(kind)

    def add_run(self, run: ItemRun) -> None:
        """Take a run of items (``ItemRun``): one stored at the same ``resourceVersion``, or
        skipped at it by the last read, is counted from its identity alone, as ``add`` would;
        every other goes through ``add``."""
        states: dict[str, _KindState] = {}
        skipped_before = self._skipped_before
        for i, ident in enumerate(run.ids):
            if ident is None:
                continue
            kind, ns, _, uid, rv = ident
            keep, _, default_namespace = run.setup.get(kind, NOT_SET_UP)
            if not ns and default_namespace:
                # ``prepare_with`` puts it in a default namespace, which may change its identity.
                self.add(run.item(i))
                continue
            st = states.get(kind)
            if st is None:
                st = states[kind] = self._state_for(kind)
            if uid in st.seen:
                continue
            have = st.load(self.cluster).get(uid)
            if have is not None and rv and have[1] == rv:
                st.seen.add(uid)
                st.matched += 1
                st.counts.seen += 1
                st.counts.unchanged += 1
                continue
            if rv and skipped_before.get(uid) == rv and keep is not None:
                self.skipped[kind] += 1
                self._skipped_now[uid] = rv
                continue
            self.add(run.item(i))

    def flush(self, kind: str) -> None:
        for first in FLUSH_FIRST.get(kind, ()):
            self.flush(first)
        items, self.buffers[kind] = self.buffers[kind], []
        self.buffered_text[kind] = 0
        if not items:
            return
        handler = {
            "Node": self._nodes, "DeviceClass": self._device_classes, "ResourceSlice": self._slices,
            "ResourceClaim": self._claims, "Pod": self._pods,
        }.get(kind)  # fmt: skip
        if handler is not None:
            handler(items)
        else:
            self._write(kind, KubeObject, items, rows.kubeobject_fields, extra=Q(kind=kind))

    # -- per kind -----------------------------------------------------------------------
    def _state_for(self, kind: str) -> _KindState:
        model = TYPED_MODELS.get(kind)
        return self._state(kind, model or KubeObject, None if model else Q(kind=kind))

    def _state(self, kind: str, model: type, extra: Q | None = None) -> _KindState:
        if kind not in self.kinds:
            self.kinds[kind] = _KindState(model, self.counts[kind], extra, held=self._known.pop(kind, None))
        return self.kinds[kind]

    def known_after(self) -> dict[str, dict[str, tuple[int, str]]]:
        """kind -> {uid: (pk, resourceVersion)} of the stored rows after this reconcile, for the
        kinds it knows exactly (``_KNOWN``); call after ``finish``. Nothing after a reconcile
        with any problem (a refused row, a pool conflict): what it wrote is not told exactly."""
        if self.errors or self.pool_conflicts:
            return {}
        for kind, uids in self._pk_unread.items():  # a poll's few new pods and Events: their pks read now
            st = self.kinds[kind]
            if kind in self._inexact or st.existing is None or len(uids) > MAX_PKS_READ:
                self._inexact.add(kind)  # a first sync's every row: read on the next sync, if ever needed
                continue
            for chunk in _chunks(uids):
                for uid, pk in st.rows(self.cluster).filter(uid__in=chunk).values_list("uid", "pk"):
                    st.existing[uid] = (pk, st.existing[uid][1])
            if any(st.existing[u][0] == 0 for u in uids):
                self._inexact.add(kind)
        out = {k: held for k, held in self._known.items() if k not in self._inexact}  # kinds this read never met
        out.update((k, st.existing) for k, st in self.kinds.items() if st.existing is not None and k not in self._inexact)
        return out

    def _write(self, kind: str, model: type, items: list[Item], build: Callable[..., dict[str, Any]], extra: Q | None = None, children: bool = False) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Create and update ``items`` of one kind (already new or changed, see ``add``);
        returns (created, updated) as (pk, index into items) pairs. ``build(obj, text,
        record)`` gives a row. New rows' pks are known only for kinds that have child rows
        (``children``); for the others ``existing`` learns the uid with pk 0."""
        st = self._state(kind, model, extra)
        existing = st.load(self.cluster)
        built = []
        for obj, text, _, record in items:
            row = build(obj, text, record)
            row["cluster_id"] = self.cluster.pk
            built.append(row)
        creates, updates = decide.split(existing, [uid for _, _, uid, _ in items])
        if not children or kind == "ResourceClaim":  # a slice's devices also name nodes: its own path
            updates = self._without_unchanged(st, model, items, updates)

        def describe(row: dict[str, Any]) -> str:
            return f"{kind} {row.get('namespace') or ''}{'/' if row.get('namespace') else ''}{row.get('name')}"

        pairs = [(pk, built[i]) for pk, i in updates]
        failed = self.writer.store(model, pairs, lambda pr: describe(pr[1]),
                                   update=[k for k in pairs[0][1] if k != "cluster_id"] if pairs else [])
        updated = [u for n, u in enumerate(updates) if n not in failed]
        st.counts.updated += len(updated)
        self.changes.add("updated", kind, (items[i][2] for _, i in updated))
        rv = [str(rows.meta(obj).get("resourceVersion") or "") for obj, _, _, _ in items]
        for pk, i in updated:
            existing[items[i][2]] = (pk, rv[i])
        uid = [items[i][2] for i in creates]

        new_rows = [built[i] for i in creates]
        if not children:
            # No child rows: nothing needs the new rows' pks, so the batch is stored while the
            # next one is prepared. ``existing`` learns each uid with pk 0 (stored, pk unread).
            def unkeyed(failed: set[int]) -> None:
                kept = [n for n in range(len(creates)) if n not in failed]
                for n in kept:
                    existing[uid[n]] = (0, rv[creates[n]])
                self._pk_unread[kind].extend(uid[n] for n in kept)
                st.counts.created += len(kept)
                self.changes.add("created", kind, (uid[n] for n in kept))

            self.writer.store_later(model, new_rows, describe, unkeyed)
            return [(0, i) for i in creates], updated
        created: list[tuple[int, int]] = []

        def keyed(pks: dict[int, int]) -> None:
            for n, pk in pks.items():
                existing[uid[n]] = (pk, rv[creates[n]])
                created.append((pk, creates[n]))

        def stored(failed: set[int]) -> None:
            for n in failed:
                existing.pop(uid[n], None)  # keyed before the database refused it
            st.counts.created += len(creates) - len(failed)
            self.changes.add("created", kind, (uid[n] for n in range(len(creates)) if n not in failed))

        among = model.objects.filter(Q(cluster=self.cluster) & (extra or Q()))
        self.writer.create_parents(kind, among, new_rows, describe, keyed, stored)
        return created, updated

    def _without_unchanged(self, st: _KindState, model: type, items: list[Item],
                           updates: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """``updates`` without the objects that carry no ``resourceVersion`` (hand-written
        files) and equal the stored object: unchanged, as an object met at its stored
        ``resourceVersion`` is, so a re-sync of the same file reports no update (and an unchanged
        claim's allocation results stay as they are). Slices are left to their own checks: their
        devices also name nodes."""
        blind = [(pk, i) for pk, i in updates if not rows.meta(items[i][0]).get("resourceVersion")]
        if not blind:
            return updates
        same: set[int] = set()
        for chunk in _chunks(blind):
            stored = dict(model.objects.filter(pk__in=[pk for pk, _ in chunk]).values_list("pk", "raw"))
            same.update(pk for pk, i in chunk if pk in stored and stored[pk] == items[i][0])
        st.counts.unchanged += len(same)
        return [u for u in updates if u[0] not in same] if same else updates

    def _nodes(self, items: list[Item]) -> None:
        self.node_objects.update(str(rows.meta(o).get("name")) for o, _, _, _ in items)
        created, updated = self._write("Node", Node, items, rows.node_fields)
        if created or updated:
            self.devices_moved = True  # new or changed nodes: recount them all at the end

    def _device_classes(self, items: list[Item]) -> None:
        created, updated = self._write("DeviceClass", DeviceClass, items, rows.device_class_fields)
        if created or updated:
            self.classes = self._classes()

    def _slices(self, items: list[Item]) -> None:
        created, updated = self._write("ResourceSlice", ResourceSlice, items, rows.slice_fields, children=True)
        changed = [(pk, items[i][3]) for pk, i in [*created, *updated]]
        if changed:
            self._sync_devices(changed, updated={pk for pk, _ in updated})

    def _claims(self, items: list[Item]) -> None:
        created, updated = self._write("ResourceClaim", ResourceClaim, items, rows.claim_fields, children=True)
        self._claim_children([(pk, items[i][3]) for pk, i in created], [(pk, items[i][3]) for pk, i in updated])

    def _pods(self, items: list[Item]) -> None:
        self._write("Pod", Pod, items, rows.pod_fields)

    # -- devices ------------------------------------------------------------------------
    def _classes(self) -> dict[str, list[str]]:
        return dict(DeviceClass.objects.filter(cluster=self.cluster).order_by("name").values_list("name", "selectors"))

    def _matcher(self, classes: dict[str, list[str]]) -> Callable[[parse.Device], list[str]]:
        """device -> names of the DeviceClasses whose CEL selectors it matches (``inventory.cel``).

        A class whose selector does not compile or fails on a device does not match it."""
        match = self._matcher_cache.get(id(classes))
        if match is None:

            def match(d: parse.Device) -> list[str]:
                try:
                    return list(cel.classes_matching(d, classes))
                except Exception:  # a CEL library fault must not fail the inventory: no class matches
                    return []

            self._matcher_cache[id(classes)] = match
        return match

    def _devices_in_pools(self, pools: set[tuple[str, str]], *columns: str, names: set[str] | None = None) -> Iterator[tuple[Any, ...]]:
        """``(driver, pool, name, *columns)`` of the stored devices in the (driver, pool) pairs
        (and with one of ``names``, when given), queried per driver so the (cluster, driver,
        pool, name) key's index is used."""
        for drv, chunk in pool_chunks(pools):
            qs = Device.objects.filter(cluster=self.cluster, driver=drv, pool__in=chunk)
            if names is not None and len(names) <= 400:
                qs = qs.filter(name__in=sorted(names))
            yield from qs.values_list("driver", "pool", "name", *columns)

    def _device_row(self, d: parse.Device, match: Callable[[parse.Device], list[str]]) -> dict[str, Any]:
        row = rows.device_fields(d, match(d))
        row["cluster_id"] = self.cluster.pk  # for a new device; updates leave it
        return row

    def _sync_devices(self, slices: list[tuple[int, parse.ResourceSlice]], updated: set[int]) -> None:
        """Reconcile the devices of changed slices in place (stable pks keep metrics and
        allocations); a device key another slice already holds is a duplicate: keep the first."""
        counts = self.counts["Device"]
        match = self._matcher(self.classes)
        self.slices_by_classes.append((self.classes, [pk for pk, _ in slices]))

        def row_of(d: parse.Device) -> dict[str, Any]:
            return self._device_row(d, match)

        # Rows first, before any query: new slices may still be being stored (PostgreSQL).
        found = decide.wanted_devices(slices, row_of)
        self._pool_conflicts(found.conflicts)
        lost = self.writer.refused("ResourceSlice")  # new slices the database refused: no devices
        wanted = {k: v for k, v in found.rows.items() if v[0] not in lost} if lost else found.rows
        self.slice_nodes.update(s.node_name for pk, s in slices if s.node_name and pk not in lost)
        slice_pks = {pk for pk, _ in slices}
        stored: dict[tuple[str, str, str], int] = {}
        for pks in _chunks(sorted(updated)):  # a slice created just now has no devices yet
            for pk, drv, pool, name in Device.objects.filter(slice_id__in=pks).values_list("pk", "driver", "pool", "name"):
                stored[(drv, pool, name)] = pk
        # New devices another slice already holds. Only pools with stored devices can hold one:
        # in a cluster that had none when the sync began, the pools written since (usually
        # none: a pool is one node's slice), which spares a full sync these queries.
        if self.had_devices is None:
            self.had_devices = Device.objects.filter(cluster=self.cluster).exists()
        pools = decide.pools_to_search(wanted, stored, None if self.had_devices else self.pools_written)
        self.pools_written.update(k[:2] for k in wanted)
        elsewhere: dict[tuple[str, str, str], tuple[int, int]] = {}  # key -> (device pk, its slice's pk)
        for drv, pool, name, pk, slice_id in self._devices_in_pools(pools, "pk", "slice_id"):
            if slice_id not in slice_pks:
                elsewhere[(drv, pool, name)] = (pk, slice_id)
        generation = {pk: s.pool_generation for pk, s in slices}
        for chunk in _chunks(sorted({h for _, h in elsewhere.values()})):
            generation.update(ResourceSlice.objects.filter(pk__in=chunk).values_list("pk", "pool_generation"))
        plan = decide.device_changes(wanted, stored, elsewhere, generation)
        self._pool_conflicts(plan.conflicts)
        if plan.older:
            self.older.extend(plan.older)
            self.older_generation.update(generation)
        incomplete = set(found.incomplete | plan.incomplete)  # stored without one of their devices: _read_again
        self.writer.delete(Device, plan.delete)

        self._store_device_updates(plan.update, incomplete)
        counts.seen += len(wanted)
        counts.deleted += len(plan.delete)
        if plan.create or plan.update or plan.delete:
            self.devices_moved = True

        def stored_new(failed: set[int]) -> None:
            # The new devices are stored while the next slices are parsed (PostgreSQL).
            incomplete.update(plan.create[n]["slice_id"] for n in failed)
            counts.created += len(plan.create) - len(failed)
            self._read_slices_again(incomplete)

        self.writer.store_later(Device, plan.create, _device, stored_new)

    def _store_device_updates(self, update: list[tuple[int, dict[str, Any]]], incomplete: set[int]) -> None:
        """Store ``update`` ((device pk, row) pairs, ``slice_id`` among the fields); a slice
        whose device row the database refused goes into ``incomplete``."""
        failed = self.writer.store(Device, update, lambda pr: _device(pr[1]), update=rows.DEVICE_FIELDS)
        incomplete.update(update[n][1]["slice_id"] for n in failed)
        self.counts["Device"].updated += len(update) - len(failed)

    def _read_slices_again(self, incomplete: set[int]) -> None:
        """Slices stored without one of their devices: the next sync reads them again."""
        if incomplete:
            self._inexact.add("ResourceSlice")
            _read_again(ResourceSlice, incomplete)

    def _pool_conflicts(self, conflicts: tuple[decide.PoolConflict, ...]) -> None:
        for c in conflicts:
            self.pool_conflicts[c.pool].append(c.message)

    def _reclassify(self) -> None:
        """Match devices again where the DeviceClasses they were matched with are not the final
        ones (classes changed in this sync, or were read after some of the slices), reading
        each such slice's devices again from its stored ``raw``."""
        final = self._classes()
        fresh = {pk for classes, pks in self.slices_by_classes if classes == final for pk in pks}
        if final == self.start_classes:
            stale = {pk for classes, pks in self.slices_by_classes if classes != final for pk in pks} - fresh
            if not stale:
                return
            slices = ResourceSlice.objects.filter(pk__in=stale)
        else:
            slices = ResourceSlice.objects.filter(cluster=self.cluster).exclude(pk__in=fresh)
        match = self._matcher(final)
        changed = []
        for chunk in _chunks(list(slices.order_by("pk").values_list("pk", flat=True)), SLICE_CHUNK):
            stored = {
                (slice_pk, name): (pk, classes)
                for pk, slice_pk, name, classes in Device.objects.filter(slice_id__in=chunk).values_list("pk", "slice_id", "name", "device_classes")
            }
            for slice_pk, raw in ResourceSlice.objects.filter(pk__in=chunk).values_list("pk", "raw"):
                try:
                    devices = parse.parse_resource_slice(normalize(raw)).devices
                except ValueError:  # stored, so it was read once; its devices stay as matched
                    continue
                for d in devices:
                    pk, classes = stored.get((slice_pk, d.name), (None, None))
                    if pk is not None and (now := match(d)) != classes:
                        changed.append((pk, {"device_classes": now}))
        update_rows(Device, ["device_classes"], changed)

    # -- claims -------------------------------------------------------------------------
    def _claim_children(self, created: list[tuple[int, parse.ResourceClaim]], updated: list[tuple[int, parse.ResourceClaim]]) -> None:
        """Rebuild allocation results and reservations of new and changed claims, pointing each
        result at its device when that device is already stored."""
        lost = self.writer.refused("ResourceClaim")  # new claims the database refused: no children
        if lost:
            created = [(pk, c) for pk, c in created if pk not in lost]
        for pks in _chunks([pk for pk, _ in updated]):
            self.touched_nodes.update(
                AllocationResult.objects.filter(claim_id__in=pks, device__isnull=False).values_list("device__node_name", flat=True)
            )
            AllocationResult.objects.filter(claim_id__in=pks).delete()
            Reservation.objects.filter(claim_id__in=pks).delete()
        claims = [*created, *updated]
        wanted = {(r.driver, r.pool, r.device) for _, c in claims for r in c.results}
        index = {
            (drv, pool, name): (pk, node)
            for drv, pool, name, pk, node in self._devices_in_pools({k[:2] for k in wanted}, "pk", "node_name", names={k[2] for k in wanted})
        }
        made = decide.claim_children(claims, index, self.cluster.pk)
        self.errors.extend(made.errors)
        self.touched_nodes.update(made.nodes)
        results, reservations = made.results, made.reservations
        failed = self.writer.store(AllocationResult, results, lambda r: f"allocation result {r['driver']}/{r['pool']}/{r['device_name']}")
        incomplete = {results[n]["claim_id"] for n in failed} | made.unread
        failed = self.writer.store(Reservation, reservations, lambda r: f"reservedFor {r['resource']} {r['name']}")
        incomplete |= {reservations[n]["claim_id"] for n in failed}
        if incomplete:
            self._inexact.add("ResourceClaim")
        _read_again(ResourceClaim, incomplete)  # stored without one of its results or consumers

    def _resolve_allocations(self) -> None:
        """Point allocation results whose device was unknown at the device with their key."""
        pending = list(
            AllocationResult.objects.filter(cluster=self.cluster, device__isnull=True).values_list("pk", "driver", "pool", "device_name")
        )
        if not pending:
            return
        index = {
            (drv, pool, name): (pk, node)
            for drv, pool, name, pk, node in self._devices_in_pools({(d, p) for _, d, p, _ in pending}, "pk", "node_name")
        }
        found = [(pk, index[(d, p, n)]) for pk, d, p, n in pending if (d, p, n) in index]
        update_rows(AllocationResult, ["device_id"], ((pk, {"device_id": dev[0]}) for pk, dev in found))
        self.touched_nodes.update(dev[1] for _, dev in found)

    # -- the end of the read ------------------------------------------------------------
    def _ensure_slice_nodes(self) -> None:
        """Give every node a ResourceSlice names a Node row, even when no Node object was read.

        Such rows use the stand-in uid an uid-less Node object would get (``Node//name``), are
        flagged ``from_slices``, and vanish when a complete Node list no longer has them. Their
        GPU product and counts come from their devices: a new row makes ``finish`` recount
        every node (``refresh_node_summaries``)."""
        named = self.slice_nodes - self.node_objects
        if not named:
            return
        # Seen in this read (through their slices): a complete Node list must not delete them.
        self._state_for("Node").seen.update(f"Node//{n}" for n in named)
        have: set[str] = set()
        for chunk in _chunks(sorted(named)):
            have.update(Node.objects.filter(cluster=self.cluster, name__in=chunk).values_list("name", flat=True))
        rows = [
            {"cluster_id": self.cluster.pk, "uid": f"Node//{n}", "name": n, "from_slices": True}
            for n in sorted(named - have)
        ]
        failed = self.writer.store(Node, rows, lambda row: f"Node {row['name']} (named by a ResourceSlice)")
        if rows:
            self._inexact.add("Node")  # rows written outside ``_write``
        self.changes.add("created", "Node", (r["uid"] for n, r in enumerate(rows) if n not in failed))
        if len(failed) < len(rows):
            self.devices_moved = True

    def _delete_vanished(self, read: ReadResult) -> None:
        # A kind read as a delta (a watch) is never complete: it deletes only what the API
        # server reported deleted (``read.deleted``), never what it merely did not see.
        complete = read.complete_kinds - read.delta_kinds
        deleted = read.deleted or {}
        for kind in sorted(complete | set(deleted)):
            st = self._state_for(kind)
            stored = st.load(self.cluster)
            if kind in complete and st.matched == st.loaded:
                continue  # every object stored before the read was seen in it
            gone_uids = decide.vanished(stored, st.seen, None if kind in complete else deleted[kind])
            gone = list(gone_uids)
            if not gone:
                continue
            if kind == "ResourceClaim":
                for pks in _chunks(gone):
                    self.touched_nodes.update(
                        AllocationResult.objects.filter(claim_id__in=pks, device__isnull=False).values_list("device__node_name", flat=True)
                    )
            if kind in ("ResourceSlice", "Node"):
                self.devices_moved = True
            if kind == "DeviceClass":
                self.classes = {}  # reloaded by _reclassify
            if kind == "ResourceSlice" and self.pool_conflicts:
                kept = set()
                for chunk in _chunks(gone):
                    kept.update(pk for pk, drv, pool in ResourceSlice.objects.filter(pk__in=chunk).values_list("pk", "driver", "pool")
                                if (drv, pool) in self.pool_conflicts)
                gone = [pk for pk in gone if pk not in kept]
            if kind == "ResourceSlice":
                self._take_over(set(gone))
                # Their devices go with them (a cascade): counted, so the run says so.
                self.counts["Device"].deleted += sum(Device.objects.filter(slice_id__in=c).count() for c in _chunks(gone))
            self.writer.delete(st.model, gone)
            for pk in gone:
                stored.pop(gone_uids[pk], None)
            st.counts.deleted += len(gone)
            self.changes.add("deleted", kind, (gone_uids[pk] for pk in gone))

    def _take_over(self, gone: set[int]) -> None:
        """Give the devices a newer slice held to the other slices of its pool that publish
        them too, now that the holder is about to be deleted (a driver that re-created its pool
        with a lower generation): before its delete takes the devices with it. Those slices
        were changed in this read (``self.older``), or stored by an earlier one while the
        holder lasted and unchanged since (``_survivors``)."""
        if not gone:
            return
        lost = self.writer.refused("ResourceSlice")
        older = [o for o in self.older if o[3]["slice_id"] not in lost]
        generation = dict(self.older_generation)
        older += self._survivors(gone, generation)
        if not older:
            return
        holders = sorted({o[1] for o in older if o[2] in gone})
        have: set[int] = set()
        for chunk in _chunks(holders):
            have.update(Device.objects.filter(pk__in=chunk).values_list("pk", flat=True))
        plan = decide.take_over(older, gone, generation, have)
        self._pool_conflicts(plan.conflicts)

        incomplete = set(plan.incomplete)
        self._store_device_updates(plan.update, incomplete)
        failed_create = self.writer.store(Device, plan.create, _device)
        incomplete.update(plan.create[n]["slice_id"] for n in failed_create)
        self.counts["Device"].created += len(plan.create) - len(failed_create)
        if plan.update or plan.create:
            self.devices_moved = True
        self._read_slices_again(incomplete)

    def _survivors(self, gone: set[int], generation: dict[int, int]) -> list[tuple[tuple[str, str, str], int, int, dict[str, Any]]]:
        """``decide.DeviceChanges.older`` entries of the stored slices this read did not
        write, in the pools of the ``gone`` slices, for the devices those hold; ``generation``
        gets the pool generation of each slice named. Their devices are read again from the
        stored objects, as ``_reclassify`` does."""
        pools: set[tuple[str, str]] = set()
        for chunk in _chunks(sorted(gone)):
            for pk, drv, pool, gen in ResourceSlice.objects.filter(pk__in=chunk).values_list("pk", "driver", "pool", "pool_generation"):
                pools.add((drv, pool))
                generation[pk] = gen
        held = {(drv, pool, name): (pk, slice_id)
                for drv, pool, name, pk, slice_id in self._devices_in_pools(pools, "pk", "slice_id") if slice_id in gone}
        if not held:
            return []
        written = {pk for _, pks in self.slices_by_classes for pk in pks} | gone
        match = self._matcher(self.classes or self._classes())
        out = []
        for drv, chunk in pool_chunks(pools):
            survivors = ResourceSlice.objects.filter(cluster=self.cluster, driver=drv, pool__in=chunk).order_by("pk")
            for pk, gen, raw in survivors.values_list("pk", "pool_generation", "raw"):
                if pk in written:
                    continue
                try:
                    devices = parse.parse_resource_slice(normalize(raw)).devices
                except ValueError:  # stored, so it was read once; it takes nothing over
                    continue
                generation[pk] = gen
                for d in devices:
                    if d.key in held:
                        row = self._device_row(d, match)
                        row.update(slice_id=pk, driver=d.driver, pool=d.pool, name=d.name)
                        out.append((d.key, *held[d.key], row))
        return out

    def finish(self, read: ReadResult) -> tuple[dict[str, dict[str, int]], list[str]]:
        for kind in [*TYPED_MODELS, *sorted(k for k in self.buffers if k not in TYPED_MODELS)]:
            self.flush(kind)
        self.writer.settle()
        self._ensure_slice_nodes()
        for kind, n in self.skipped.items():
            read.skipped[kind] = read.skipped.get(kind, 0) + n
        _keep_skipped(self.cluster.pk, self._skipped_before, self._skipped_now, self._skips_decided)
        errors = [*read.errors, *self.errors]
        if not errors:  # a read that failed part-way deletes nothing it may have missed
            self._delete_vanished(read)
        self._resolve_allocations()  # after the deletes: a device taken over may be a new row
        self.changes.incomplete = bool(errors)
        errors += [m for _, msgs in sorted(self.pool_conflicts.items()) for m in msgs]
        self._reclassify()
        if self.devices_moved:
            refresh_node_summaries(self.cluster)  # the device set moved: recount every node
        elif self.touched_nodes:
            refresh_node_summaries(self.cluster, self.touched_nodes)
        return {k: v.as_dict() for k, v in self.counts.items()}, errors


def refresh_node_summaries(cluster: Cluster, nodes: set[str] | None = None) -> int:
    """Recompute per-node device counts (all nodes, or only ``nodes``); write only rows that moved.

    One pass over the devices' small columns: a MIG-partitioned GPU is published only as
    its instances, so physical GPUs are whole-GPU uuids plus distinct MIG ``parentUUID``s.
    ``gpu_product`` becomes the ``productName`` its GPU devices publish (the same name as on
    device pages; the ``nvidia.com/gpu.product`` label spells it with dashes), and stays the
    label's value on a node without GPU devices. ``free_gpu_count``: GPUs published whole with
    nothing allocated on them or on a device carved from them (a MIG instance, a placement).
    """
    zero = {"gpu_count": 0, "mig_count": 0, "allocated_count": 0, "free_count": 0, "free_gpu_count": 0, "device_count": 0}
    devs = Device.objects.filter(cluster=cluster)
    results = AllocationResult.objects.filter(cluster=cluster, device__isnull=False)
    node_rows = Node.objects.filter(cluster=cluster)
    slices = ResourceSlice.objects.filter(cluster=cluster)  # whose generations say which devices are superseded
    if nodes is not None:
        if not nodes:
            return 0
        names = sorted(nodes)
        devs, results, node_rows = (
            devs.filter(node_name__in=names),
            results.filter(device__node_name__in=names),
            node_rows.filter(name__in=names),
        )
        slices = slices.filter(pool__in=devs.values("pool"))  # the pools of those nodes' devices
    allocated = set(results.values_list("device_id", flat=True))
    rows, states, invalid = queries.slice_pools(slices)
    # An older generation of its pool: the scheduler does not offer it.
    stale = {pk for pk, d, p, g, _, _ in rows if g != states[(d, p)].newest}
    # A pool listing a device twice: the scheduler allocates nothing from it, so none is free.
    unoffered = {pk for pk, d, p, _, _, _ in rows if (d, p) in invalid}
    per_node: dict[str, dict[str, Any]] = defaultdict(lambda: {
        "devices": 0, "gpus": set(), "migs": 0, "alloc": 0, "unoffered": 0, "gpu_devs": 0, "product": "",
        "whole": [], "busy": set(),  # uuids of unheld whole GPUs; of GPUs a device carved from is held
    })
    for pk, node, driver, dtype, uuid, parent, product, slice_pk in devs.values_list(
            "pk", "node_name", "driver", "type", "uuid", "parent_uuid", "product_name", "slice_id"):
        if slice_pk in stale:
            continue
        acc = per_node[node]
        acc["devices"] += 1
        if driver != parse.GPU_DRIVER:
            continue
        acc["gpu_devs"] += 1
        acc["product"] = acc["product"] or product
        if pk in allocated:
            acc["alloc"] += 1
            if parent:
                acc["busy"].add(parent)  # a device carved from that GPU is held
        elif slice_pk in unoffered:
            acc["unoffered"] += 1
        if dtype == DeviceType.GPU:
            acc["gpus"].add(uuid or f"pk:{pk}")
            if not parent and pk not in allocated and slice_pk not in unoffered:
                acc["whole"].append(uuid)
        elif dtype == DeviceType.MIG:
            acc["migs"] += 1
            acc["gpus"].add(parent or f"pk:{pk}")
    changed = []
    columns = [*zero, "gpu_product"]
    for pk, name, *have in node_rows.values_list("pk", "name", *columns):
        acc = per_node.get(name)
        want = {**zero, "gpu_product": have[-1]}
        if acc:
            want = {
                "gpu_count": len(acc["gpus"]), "mig_count": acc["migs"], "allocated_count": acc["alloc"],
                "free_count": acc["gpu_devs"] - acc["alloc"] - acc["unoffered"],
                "free_gpu_count": sum(1 for u in acc["whole"] if not u or u not in acc["busy"]),
                "device_count": acc["devices"],
                "gpu_product": acc["product"] or have[-1],
            }  # fmt: skip
        if list(want.values()) != have:
            changed.append((pk, want))
    return update_rows(Node, columns, changed)
