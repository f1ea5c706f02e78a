"""What the overview keeps of a cluster (``inventory.summaries``), kept in the database too.

A process that holds no summaries of a cluster (a ``sync_cluster`` command, a restarted
worker) would otherwise compute every node's allocation state and count every stored device
before it can follow a sync's change: at 5,000 nodes seconds, for a change of a few claims.
It loads them from here instead (``KeptChunk`` rows) and recomputes only what the change
reached. Node summaries and pool counts are split into ``BUCKETS`` buckets by name, so a
change rewrites only the buckets of what it recomputed.

The marker row's ``basis`` is the cluster's ``data_changed_at`` the rows describe; rows and
marker are written in one transaction, after the sync that changed the cluster committed, so
a process that dies before writing them leaves the old basis: read as absent, never wrong.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import msgspec
from django.db import transaction

from . import blobs, model_codec
from .bulk import insert_rows
from .models import KeptChunk
from .summaries import NodeSummary, PoolDevices, PoolKey

log = logging.getLogger(__name__)

BUCKETS = model_codec.BUCKETS
MARKER = ""
NODE, POOL = "node", "pool"

_node_type = dict[str, NodeSummary]
_pool_type = list[tuple[PoolKey, PoolDevices]]
_encoder = msgspec.msgpack.Encoder()
_decoders = {NODE: msgspec.msgpack.Decoder(_node_type), POOL: msgspec.msgpack.Decoder(_pool_type)}


@cache
def fingerprint() -> str:
    """SHA-256 of the code the kept numbers come from (the summaries, the allocation state,
    the device-count query, and the parse layer's own fingerprint); empty when unreadable."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(model_codec.fingerprint().encode())
    try:
        for name in ("summaries.py", "capacity.py", "queries.py", "rows.py"):
            h.update(name.encode())
            h.update((here / name).read_bytes())
    except OSError:
        return ""
    return h.hexdigest() if model_codec.fingerprint() else ""


# The stored model's bucket function; node and pool names are a cluster's few thousand, asked
# on every save.
_bucket = lru_cache(maxsize=1 << 16)(model_codec.bucket_of)


def _pool_bucket(key: PoolKey) -> int:
    return _bucket(f"{key[0]}/{key[1]}")


def _marker(cluster_pk: int) -> tuple[Any, str] | None:
    """(basis, fingerprint) the kept rows were written for, None when there are none."""
    return KeptChunk.objects.filter(cluster_id=cluster_pk, part=MARKER).values_list("basis", "fingerprint").first()


def load(cluster_pk: int, basis: Any, *, nodes_too: bool = True) -> tuple[dict[str, NodeSummary], dict[PoolKey, PoolDevices]] | None:
    """(node -> summary, pool -> device counts) of the cluster in state ``basis``, or None
    when no valid rows describe that state (``nodes_too`` False: the pool counts alone, the
    node summaries left empty)."""
    fp = fingerprint()
    if basis is None or not fp or _marker(cluster_pk) != (basis, fp):
        return None
    nodes: dict[str, NodeSummary] = {}
    pools: dict[PoolKey, PoolDevices] = {}
    try:
        for part, data in blobs.rows(KeptChunk.objects.filter(cluster_id=cluster_pk, part__in=(NODE, POOL) if nodes_too else (POOL,)),
                                     ("part", "data"), 64):
            decoded = _decoders[part].decode(bytes(data))
            if part == NODE:
                nodes.update(decoded)
            else:
                pools.update((tuple(k), v) for k, v in decoded)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        log.warning("kept overview of cluster %s does not decode (%s); computing it afresh", cluster_pk, exc)
        return None
    return nodes, pools


def save(cluster_pk: int, basis: Any, nodes: Mapping[str, NodeSummary], pools: Mapping[PoolKey, PoolDevices],
         *, previous_basis: Any = None, nodes_changed: Iterable[str] | None = None,
         pools_changed: Iterable[PoolKey] | None = None) -> str:
    """Keep ``nodes`` and ``pools`` as the state ``basis``. With ``previous_basis`` the state
    the kept rows describe and what changed since (``nodes_changed``, ``pools_changed``), only
    their buckets are rewritten; else every row. Never raises: a failure leaves no valid rows.
    Returns ``"changed"``, ``"full"`` or ``"failed"``."""
    fp = fingerprint()
    if not fp:
        return "failed"
    try:
        with transaction.atomic():
            partial = (nodes_changed is not None and pools_changed is not None and previous_basis is not None
                       and _marker(cluster_pk) == (previous_basis, fp))
            if partial:
                want = {NODE: {_bucket(n) for n in nodes_changed}, POOL: {_pool_bucket(p) for p in pools_changed}}
            else:
                want = {NODE: set(range(BUCKETS)), POOL: set(range(BUCKETS))}
                KeptChunk.objects.filter(cluster_id=cluster_pk, part__in=(MARKER, NODE, POOL)).delete()
            rows = []
            for part, buckets in want.items():
                if not buckets:
                    continue
                if partial:
                    KeptChunk.objects.filter(cluster_id=cluster_pk, part=part, bucket__in=sorted(buckets)).delete()
                by_bucket: dict[int, Any] = {b: ({} if part == NODE else []) for b in buckets}
                if part == NODE:
                    for name, summary in nodes.items():
                        if (b := _bucket(name)) in by_bucket:
                            by_bucket[b][name] = summary
                else:
                    for key, counts in pools.items():
                        if (b := _pool_bucket(key)) in by_bucket:
                            by_bucket[b].append((key, counts))
                rows.extend({"cluster_id": cluster_pk, "part": part, "bucket": b, "data": _encoder.encode(v)}
                            for b, v in sorted(by_bucket.items()) if v)
            insert_rows(KeptChunk, rows)
            KeptChunk.objects.update_or_create(cluster_id=cluster_pk, part=MARKER, bucket=0,
                                                   defaults={"basis": basis, "fingerprint": fp})
            return "changed" if partial else "full"
    except Exception:  # the overview still works: the next process computes it afresh
        log.exception("keeping the overview of cluster %s failed", cluster_pk)
        KeptChunk.objects.filter(cluster_id=cluster_pk, part=MARKER).delete()
        return "failed"
