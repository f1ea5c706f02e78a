"""Read stored clusters back out: raw objects for the pure engines, JSON for scripts.

``cluster_objects`` gives the diagnosis engine and the migration planner the same raw,
v1-shaped objects a snapshot would, so both work identically on stored and on-disk data.
``inventory_json`` is the ``inventory --format json`` document.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator
from typing import Any

from django.db.models import QuerySet

from .model import ClusterModel
from .models import TYPED_MODELS, Cluster, Device, KubeObject, Node


class ClusterNotFound(LookupError):
    """No stored cluster has this name."""


def get_cluster(name: str) -> Cluster:
    try:
        return Cluster.objects.get(name=name)
    except Cluster.DoesNotExist:
        known = ", ".join(Cluster.objects.values_list("name", flat=True)) or "none"
        raise ClusterNotFound(f"no cluster named {name!r} (known: {known})") from None




def iter_cluster_objects(cluster: Cluster, kinds: Collection[str] | None = None) -> Iterator[dict[str, Any]]:
    """The stored raw objects of ``cluster`` (only ``kinds``, when given), read in chunks.

    For engines that look at each object once: memory holds one chunk of raw objects, not
    the cluster (a 1,000-node fleet's slices decode to several times the payload's size).
    """
    from . import jsonlist

    for text in iter_cluster_texts(cluster, kinds):
        yield jsonlist.decode(text)


def iter_cluster_texts(cluster: Cluster, kinds: Collection[str] | None = None) -> Iterator[str]:
    """The stored raw objects of ``cluster`` (only ``kinds``) as JSON text, in chunks (50
    slices, 500 other objects)."""
    from django.db.models import TextField
    from django.db.models.functions import Cast

    as_text = Cast("raw", output_field=TextField())
    for kind, model in TYPED_MODELS.items():
        if kinds is None or kind in kinds:
            chunk = 50 if kind == "ResourceSlice" else 500
            yield from model.objects.filter(cluster=cluster).values_list(as_text, flat=True).iterator(chunk_size=chunk)
    others = KubeObject.objects.filter(cluster=cluster)
    if kinds is not None:
        others = others.filter(kind__in=sorted(set(kinds) - set(TYPED_MODELS)))
    yield from others.values_list(as_text, flat=True).iterator(chunk_size=500)


def load_model(cluster: Cluster) -> ClusterModel:
    """The cluster model of ``cluster``, what a process holding none reads (a fresh process,
    or another process synced the cluster since): the records its last sync stored
    (``stored_model``) when they describe its current state, else ``parse_stored_model``."""
    from . import stored_model

    basis = cluster.stored_data_changed_at()
    stored = stored_model.load(cluster.pk, basis)
    return stored if stored is not None else parse_stored_model(cluster)


def parse_stored_model(cluster: Cluster) -> ClusterModel:
    """The cluster model made from ``cluster``'s stored objects: each raw object read once,
    in chunks, and parsed once (``records.parse_json``); for a snapshot cluster each object's
    newest timestamp too."""
    from django.db.models import TextField
    from django.db.models.functions import Cast

    from . import jsonlist, records
    from .models import SourceKind
    from .snapshot import newest_timestamp

    model = ClusterModel()
    stamps = cluster.source_kind == SourceKind.SNAPSHOT
    as_text = Cast("raw", output_field=TextField())
    tables = [(m.objects.filter(cluster=cluster), 50 if k == "ResourceSlice" else 500) for k, m in TYPED_MODELS.items()]
    tables.append((KubeObject.objects.filter(cluster=cluster, kind__in=sorted(records.PARSERS)), 500))
    for qs, chunk in tables:
        for uid, text in qs.values_list("uid", as_text).iterator(chunk_size=chunk):
            try:
                obj = jsonlist.decode(text)
                record = records.parse_object(obj)
            except (ValueError, jsonlist.JSONError):  # stored, so it parsed once; an older shape
                continue
            if record is not None:
                model.put(uid, record, newest_timestamp([obj]) if stamps else None)
    return model


def stored_of_kind(cluster: Cluster, kind: str) -> tuple[QuerySet, bool]:
    """The stored objects of ``kind`` in ``cluster`` (its typed table, else ``KubeObject``) and
    whether that table has a namespace column."""
    model = TYPED_MODELS.get(kind)
    if model is None:
        return KubeObject.objects.filter(cluster=cluster, kind=kind), True
    return model.objects.filter(cluster=cluster), any(f.name == "namespace" for f in model._meta.fields)


def stored_raw(cluster: Cluster, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
    """One stored object's raw form (what the migration planner patches), or None."""
    from . import jsonlist

    qs, namespaced = stored_of_kind(cluster, kind)
    qs = qs.filter(name=name)
    if namespace is not None and namespaced:
        qs = qs.filter(namespace=namespace)
    raw = qs.values_list("raw", flat=True).first()
    if isinstance(raw, (str, bytes)):
        raw = jsonlist.decode(raw)
    return raw if isinstance(raw, dict) and raw else None


def stored_object_count(cluster: Cluster) -> int:
    """How many stored objects of ``cluster`` have a record (what a complete model holds)."""
    from . import records

    n = sum(m.objects.filter(cluster=cluster).count() for k, m in TYPED_MODELS.items() if k != "Node")
    n += Node.objects.filter(cluster=cluster, from_slices=False).count()
    return n + KubeObject.objects.filter(cluster=cluster, kind__in=sorted(records.PARSERS)).count()


def cluster_objects(name: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """All stored raw objects of cluster ``name`` and its DCGM scrapes (file -> text).

    Raises ``ClusterNotFound``. Scrapes are not stored; the dict is empty (latest values
    live on ``Device.metrics``).
    """
    return list(iter_cluster_objects(get_cluster(name))), {}


def _device_json(d: Device, holder: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": d.name,
        "driver": d.driver,
        "pool": d.pool,
        "type": d.type_raw or d.type,
        "uuid": d.uuid or None,
        "parent_uuid": d.parent_uuid or None,
        "product_name": d.product_name or None,
        "profile": d.profile or None,
        "memory_bytes": d.memory_bytes,
        "device_classes": d.device_classes,
        "allocated_to": holder.get(d.pk),
        "metrics": d.metrics or {},
        "metrics_at": d.metrics_at.isoformat() if d.metrics_at else None,
        "metrics_pod": d.metrics_pod or None,
    }


def holders(cluster: Cluster, device_ids: list[int] | None = None) -> dict[int, dict[str, Any]]:
    """device pk -> ``{"claim": "ns/name", "pods": ["ns/name", ...]}`` from allocation results
    and ``reservedFor`` (pods resolved by uid; a consumer with no pod keeps its recorded name)."""
    from .models import AllocationResult, Reservation

    results = AllocationResult.objects.filter(cluster=cluster, device__isnull=False)
    if device_ids is not None:
        results = results.filter(device_id__in=device_ids)
    rows = list(results.values_list("device_id", "claim_id", "claim__namespace", "claim__name"))
    claim_ids = {r[1] for r in rows}
    pods_by_claim: dict[int, list[str]] = defaultdict(list)
    for claim_id, ns, name in Reservation.objects.filter(claim_id__in=claim_ids).values_list("claim_id", "claim__namespace", "name"):
        pods_by_claim[claim_id].append(f"{ns}/{name}")
    return {dev: {"claim": f"{ns}/{name}", "pods": pods_by_claim.get(cid, [])} for dev, cid, ns, name in rows}


def inventory_json(cluster_name: str | None = None) -> dict[str, Any]:
    """``{"clusters": [{"name", "server_version", "nodes": [{"name", "devices": [...]}],
    "unattached_devices": [...]}]}``; devices as in ``_device_json``."""
    clusters = [get_cluster(cluster_name)] if cluster_name else list(Cluster.objects.all())
    out = []
    for cluster in clusters:
        holder = holders(cluster)
        by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for d in Device.objects.filter(cluster=cluster).order_by("node_name", "driver", "pool", "name").iterator(chunk_size=2000):
            by_node[d.node_name].append(_device_json(d, holder))
        node_names = list(Node.objects.filter(cluster=cluster).values_list("name", flat=True))
        for n in by_node:
            if n and n not in node_names:
                node_names.append(n)
        out.append(
            {
                "name": cluster.name,
                "server_version": cluster.server_version or None,
                "nodes": [{"name": n, "devices": by_node.get(n, [])} for n in sorted(node_names)],
                "unattached_devices": by_node.get("", []),
            }
        )
    return {"clusters": out}
