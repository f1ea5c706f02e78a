"""A cluster's model kept in the database (``ModelChunk`` rows), written by the sync that
changed the cluster, in its transaction.

A process that holds no model of a cluster (a command, a web process, a restarted worker)
loads it from here instead of parsing every stored raw object (``exports.load_model`` falls
back to that when the chunks are absent, made by other parsing code, or of another state).
The marker row's ``basis`` is the cluster's ``data_changed_at`` the chunks describe: a sync
that changes the cluster moves both together, so the chunks are never older than the objects
without saying so.
"""

from __future__ import annotations

import logging
import weakref
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction

from . import blobs
from . import model_codec as codec
from .bulk import insert_rows
from .changes import ChangeSet
from .model import ClusterModel
from .models import ModelChunk

log = logging.getLogger(__name__)

MARKER = ""
BATCH = 8  # chunk rows per INSERT: each is up to a few MB


def _stored_count(cluster_pk: int) -> int:
    from .exports import stored_object_count
    from .models import Cluster

    return stored_object_count(Cluster(pk=cluster_pk))


def _valid(cluster_pk: int, basis: Any, check_count: bool = True) -> bool:
    """Do the chunks describe the cluster in state ``basis``? The marker names that state and
    the parse layer's code; its count of stored objects also catches objects written without
    a sync (an admin, a test) that left ``data_changed_at`` alone (``check_count``: a sync
    that has already written its changes asks without it)."""
    marker = (ModelChunk.objects.filter(cluster_id=cluster_pk, kind=MARKER)
              .values_list("basis", "fingerprint", "count").first())
    return (marker is not None and basis is not None and codec.fingerprint() != ""
            and marker[:2] == (basis, codec.fingerprint())
            and (not check_count or marker[2] == _stored_count(cluster_pk)))


def load(cluster_pk: int, basis: Any, *, check_count: bool = True) -> ClusterModel | None:
    """The stored model of the cluster in state ``basis`` (its ``data_changed_at``), or None
    when no valid chunks describe that state (``check_count``: see ``_valid``)."""
    if not _valid(cluster_pk, basis, check_count):
        return None
    with codec.no_cycle_collection():
        return _load(cluster_pk, ClusterModel())


def _load(cluster_pk: int, model: ClusterModel) -> ClusterModel | None:
    rows = blobs.rows(ModelChunk.objects.filter(cluster_id=cluster_pk).exclude(kind=MARKER),
                      ("kind", "record_type", "data"), BATCH)
    try:
        for kind, type_name, data in rows:
            of_kind = model.records.setdefault(kind, {})
            for uid, newest, record in codec.decode(type_name, bytes(data)):
                of_kind[uid] = record
                if newest:
                    model.newest[uid] = newest
    except codec.CodecError:
        log.warning("stored model of cluster %s does not decode; parsing its objects instead", cluster_pk, exc_info=True)
        return None
    return model


def _rows(cluster_pk: int, kind: str, bucket: int, entries: Iterable[codec.Entry], fp: str) -> list[dict[str, Any]]:
    return [{"cluster_id": cluster_pk, "kind": kind, "bucket": bucket, "record_type": name, "count": n, "data": data,
             "fingerprint": fp} for name, n, data in codec.encode(entries)]


def _write(cluster_pk: int, buckets: Mapping[str, dict[int, list[codec.Entry]]], replace: Mapping[str, set[int]]) -> None:
    """Replace the chunk rows of ``replace`` (kind -> buckets) with ``buckets``' entries."""
    for kind, nums in replace.items():
        if nums:
            ModelChunk.objects.filter(cluster_id=cluster_pk, kind=kind, bucket__in=sorted(nums)).delete()
    fp = codec.fingerprint()
    batch: list[dict[str, Any]] = []
    for kind, by_bucket in buckets.items():
        for bucket, entries in by_bucket.items():
            if entries:
                batch.extend(_rows(cluster_pk, kind, bucket, entries, fp))
            if len(batch) >= BATCH:
                insert_rows(ModelChunk, batch)  # a binary COPY on PostgreSQL (bytes unescaped)
                batch = []
    insert_rows(ModelChunk, batch)


def _from_model(model: ClusterModel, wanted: Mapping[str, set[int]] | None,
                index: Mapping[str, Mapping[int, Mapping[str, None]]] | None = None) -> dict[str, dict[int, list[codec.Entry]]]:
    """Entries of ``model`` per kind and bucket (only the ``wanted`` buckets, when given, read
    through ``index``: kind -> bucket -> uids, when given)."""
    out: dict[str, dict[int, list[codec.Entry]]] = {}
    for kind in (model.records if wanted is None else wanted):
        want = None if wanted is None else wanted[kind]
        by_bucket: dict[int, list[codec.Entry]] = defaultdict(list)
        of_kind = model.records.get(kind, {})
        if want is not None and index is not None:
            of_index = index.get(kind, {})
            for b in want:
                by_bucket[b] = [(uid, model.newest.get(uid), of_kind[uid]) for uid in of_index.get(b, ())]
            out[kind] = by_bucket
            continue
        if want is not None:
            for b in want:
                by_bucket[b] = []  # an emptied bucket is written as no rows
        for uid, record in of_kind.items():
            b = codec.bucket_of(uid)
            if want is None or b in want:
                by_bucket[b].append((uid, model.newest.get(uid), record))
        out[kind] = by_bucket
    return out


# cluster pk -> (the model its syncs keep, weakly: a model the process let go is not held on
# to here; kind -> bucket -> uids in the model's order): which uids fall in each bucket,
# followed through each sync's changes, so a sync that changed one object does not hash
# every uid of its kind to find its bucket's other objects.
_buckets: dict[int, tuple[weakref.ref[ClusterModel], dict[str, dict[int, dict[str, None]]]]] = {}


def _bucket_index(cluster_pk: int, model: ClusterModel, changes: ChangeSet) -> dict[str, dict[int, dict[str, None]]]:
    """kind -> bucket -> uids of ``model``, for the kinds ``changes`` touched at least (a kind
    is indexed the first time a sync touches it: a command that changed claims does not hash
    every pod's and slice's uid)."""
    held = _buckets.pop(cluster_pk, None)
    index = held[1] if held is not None and held[0]() is model else {}
    for kind in changes.kinds():
        of_kind = model.records.get(kind, {})
        of_index = index.get(kind)
        if of_index is None:  # from the model, which holds this sync's changes already
            of_index = index[kind] = {}
            for uid in of_kind:
                of_index.setdefault(codec.bucket_of(uid), {})[uid] = None
            continue
        for uid in changes.uids(kind):
            at = of_index.setdefault(codec.bucket_of(uid), {})
            if uid in of_kind:
                at[uid] = None
            else:
                at.pop(uid, None)
    _buckets[cluster_pk] = (weakref.ref(model), index)
    return index


def _touched(changes: ChangeSet) -> dict[str, set[int]]:
    return {kind: {codec.bucket_of(u) for u in changes.uids(kind)} for kind in changes.kinds()}


def _patched(cluster_pk: int, wanted: Mapping[str, set[int]], upserts: Iterable[tuple[str, Any, str | None]],
             deleted: Mapping[str, Iterable[str]]) -> dict[str, dict[int, list[codec.Entry]]]:
    """The ``wanted`` buckets as stored, with this sync's upserts and deletions applied: the
    chunks follow a sync whose analyses never needed the whole model."""
    current: dict[str, dict[int, dict[str, codec.Entry]]] = {k: {b: {} for b in bs} for k, bs in wanted.items()}
    for kind, bucket, type_name, data in blobs.rows(
        ModelChunk.objects.filter(cluster_id=cluster_pk, kind__in=sorted(wanted)),
        ("kind", "bucket", "record_type", "data"), BATCH,
    ):
        if bucket in current[kind]:
            for entry in codec.decode(type_name, bytes(data)):
                current[kind][bucket][entry[0]] = tuple(entry)
    for uid, record, newest in upserts:
        by_bucket = current.get(record.kind)
        if by_bucket is not None and (b := codec.bucket_of(uid)) in by_bucket:
            by_bucket[b][uid] = (uid, newest, record)
    for kind, uids in deleted.items():
        for uid in uids:
            current.get(kind, {}).get(codec.bucket_of(uid), {}).pop(uid, None)
    return {k: {b: list(entries.values()) for b, entries in bs.items()} for k, bs in current.items()}


def _mark(cluster_pk: int, basis: Any, model: ClusterModel | None = None) -> None:
    # A model the sync kept current holds a record of every stored object: its count is
    # theirs, without counting every table (``_valid`` compares it with theirs on load).
    count = model.count() if model is not None else _stored_count(cluster_pk)
    ModelChunk.objects.update_or_create(
        cluster_id=cluster_pk, kind=MARKER, bucket=0, record_type="",
        defaults={"basis": basis, "fingerprint": codec.fingerprint(), "count": count},
    )


def record_sync(cluster_pk: int, *, previous_basis: Any, new_basis: Any, changes: ChangeSet,
                model: ClusterModel | None, upserts: Iterable[tuple[str, Any, str | None]]) -> str:
    """Bring the stored model from ``previous_basis`` to ``new_basis`` after one sync (inside
    its transaction). With the sync's ``model`` at hand: its changed buckets (all of them when
    the stored chunks were not current); without it, the changed buckets as stored, patched
    with ``upserts`` (uid, record, newest) and ``changes.deleted``; with neither, the chunks
    are left stale and read as absent. Never raises: a failure leaves the chunks marked stale.
    Returns what was done: ``"full"``, ``"changed"``, ``"patched"`` or ``"stale"``."""
    try:
        with transaction.atomic(), codec.no_cycle_collection():
            current = _valid(cluster_pk, previous_basis, check_count=False)
            if model is not None and not current:
                # Every chunk from the model: a bucket index kept from before followed none of it.
                _buckets.pop(cluster_pk, None)
                ModelChunk.objects.filter(cluster_id=cluster_pk).delete()
                _write(cluster_pk, _from_model(model, None), {})
                done = "full"
            elif model is not None:
                wanted = _touched(changes)
                _write(cluster_pk, _from_model(model, wanted, _bucket_index(cluster_pk, model, changes)), wanted)
                done = "changed"
            elif current:
                wanted = _touched(changes)
                _write(cluster_pk, _patched(cluster_pk, wanted, upserts, changes.deleted), wanted)
                done = "patched"
            else:
                return "stale"
            _mark(cluster_pk, new_basis, model)
            return done
    except Exception:  # the objects and findings stand; the next process parses instead
        log.exception("storing the model of cluster %s failed", cluster_pk)
        _buckets.pop(cluster_pk, None)  # it may have followed a change the chunks did not
        ModelChunk.objects.filter(cluster_id=cluster_pk, kind=MARKER).delete()
        return "stale"
