"""Reconcile what a source read into the database: the one sync function.

``sync_cluster(cluster, source)`` is called by the Celery task and by the
``sync_cluster`` management command alike. It reconciles by Kubernetes ``uid`` per cluster:
creates new objects, updates those whose ``resourceVersion`` changed, and deletes vanished
ones, in bulk, in one transaction. Objects whose ``resourceVersion`` is unchanged are not
rewritten, so a no-change re-sync writes no inventory rows.

Safety rule: when the read had any error (a failed page, a malformed object, an unknown API
version), the run is ``partial``: what was read is created/updated, nothing is deleted.
Deletion also only ever touches kinds the source listed completely.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from . import cel, parse
from .kinds import BY_KIND
from .models import (
    AllocationResult,
    Cluster,
    Device,
    DeviceClass,
    DeviceType,
    KubeObject,
    Node,
    Pod,
    Reservation,
    ResourceClaim,
    ResourceSlice,
    SyncRun,
    SyncStatus,
)
from .sources import ReadResult, Source, SourceError

log = logging.getLogger(__name__)

TYPED_KINDS = {"Node", "DeviceClass", "ResourceSlice", "ResourceClaim", "Pod"}
BULK = 1000


@dataclass
class KindCounts:
    seen: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Plan:
    """Per-kind reconcile plan: which incoming objects are new or changed, which uids vanished."""

    create: list[dict[str, Any]] = field(default_factory=list)
    update: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    delete_pks: list[int] = field(default_factory=list)


def _dt(value: Any):
    return parse_datetime(value) if isinstance(value, str) else None


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _plan(model, cluster: Cluster, objs: list[dict[str, Any]], may_delete: bool, counts: KindCounts, extra: Q | None = None) -> Plan:
    existing = {
        uid: (pk, rv)
        for uid, pk, rv in model.objects.filter(Q(cluster=cluster) & (extra or Q())).values_list(
            "uid", "pk", "resource_version"
        )
    }
    plan = Plan()
    seen: set[str] = set()
    for obj in objs:
        uid = parse.object_uid(obj)
        if uid in seen:
            continue
        seen.add(uid)
        counts.seen += 1
        rv = str(_meta(obj).get("resourceVersion") or "")
        if uid not in existing:
            plan.create.append(obj)
        elif not rv or existing[uid][1] != rv:
            plan.update.append((existing[uid][0], obj))
        else:
            counts.unchanged += 1
    if may_delete:
        plan.delete_pks = [pk for uid, (pk, _) in existing.items() if uid not in seen]
    return plan


def _apply(model, cluster: Cluster, plan: Plan, build: Callable[[dict[str, Any]], dict[str, Any]], counts: KindCounts) -> tuple[list[Any], list[Any]]:
    """Create and update rows from ``build(obj) -> field dict``; returns (created, updated) rows."""
    created = [model(cluster=cluster, **build(o)) for o in plan.create]
    model.objects.bulk_create(created, batch_size=BULK)
    updated = []
    for pk, obj in plan.update:
        row = model(pk=pk, cluster=cluster, **build(obj))
        updated.append(row)
    if updated:
        fields = [f for f in build(plan.update[0][1]).keys()]
        model.objects.bulk_update(updated, fields, batch_size=BULK)
    if plan.delete_pks:
        for i in range(0, len(plan.delete_pks), BULK):
            model.objects.filter(pk__in=plan.delete_pks[i : i + BULK]).delete()
    counts.created += len(created)
    counts.updated += len(updated)
    counts.deleted += len(plan.delete_pks)
    return created, updated


def _base(obj: dict[str, Any]) -> dict[str, Any]:
    m = _meta(obj)
    return {
        "uid": parse.object_uid(obj),
        "name": str(m.get("name") or ""),
        "resource_version": str(m.get("resourceVersion") or ""),
        "raw": obj,
    }


def _node_fields(obj: dict[str, Any]) -> dict[str, Any]:
    labels = _meta(obj).get("labels") or {}
    return {
        **_base(obj),
        "labels": labels if isinstance(labels, dict) else {},
        "unschedulable": bool((obj.get("spec") or {}).get("unschedulable")),
        "ready": parse.node_ready(obj),
        "kubelet_version": parse.node_kubelet_version(obj),
        "gpu_product": str(labels.get("nvidia.com/gpu.product", "")) if isinstance(labels, dict) else "",
    }


def _device_class_fields(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    selectors = [
        s["cel"]["expression"]
        for s in spec.get("selectors") or []
        if isinstance(s, dict) and isinstance(s.get("cel"), dict) and isinstance(s["cel"].get("expression"), str)
    ]
    return {**_base(obj), "selectors": selectors, "extended_resource_name": str(spec.get("extendedResourceName") or "")}


def _claim_fields(obj: dict[str, Any]) -> dict[str, Any]:
    c = parse.parse_resource_claim(obj)
    devices_node = parse.allocation_node(obj) or ""
    return {
        **_base(obj),
        "namespace": c.namespace,
        "state": c.state,
        "created": _dt(c.created),
        "allocated_at": _dt(c.allocation_timestamp),
        "deletion_timestamp": _dt(c.deletion_timestamp),
        "requests": [parse.request_summary(r) for r in c.requests],
        "device_count": len(c.results),
        "node_name": devices_node,
    }


def _pod_fields(obj: dict[str, Any]) -> dict[str, Any]:
    m = _meta(obj)
    return {
        **_base(obj),
        "namespace": str(m.get("namespace") or ""),
        "node_name": str((obj.get("spec") or {}).get("nodeName") or ""),
        "phase": str((obj.get("status") or {}).get("phase") or ""),
        "created": _dt(m.get("creationTimestamp")),
        "deletion_timestamp": _dt(m.get("deletionTimestamp")),
        "claim_names": parse.pod_claim_names(obj),
    }


def _kubeobject_fields(obj: dict[str, Any]) -> dict[str, Any]:
    m = _meta(obj)
    return {
        **_base(obj),
        "kind": str(obj.get("kind")),
        "api_version": str(obj.get("apiVersion") or ""),
        "namespace": str(m.get("namespace") or ""),
    }


def _class_matcher(cluster: Cluster) -> Callable[[parse.Device], list[str]]:
    """Return device -> names of DeviceClasses whose CEL selectors it matches.

    Uses ``inventory.cel`` (CEL with the Kubernetes extension functions). A class whose
    selector does not compile or fails on a device simply does not match it.
    """
    classes = dict(DeviceClass.objects.filter(cluster=cluster).values_list("name", "selectors"))

    def match(d: parse.Device) -> list[str]:
        try:
            return list(cel.classes_matching(d, classes))
        except Exception:  # a CEL library fault must not fail the inventory: no class matches
            return []

    return match


def _device_fields(d: parse.Device, match: Callable[[parse.Device], list[str]]) -> dict[str, Any]:
    dtype = d.type if d.type in (DeviceType.GPU, DeviceType.MIG) else DeviceType.OTHER
    return {
        "driver": d.driver,
        "pool": d.pool,
        "name": d.name,
        "node_name": d.node_name or "",
        "type": dtype,
        "type_raw": d.type,
        "uuid": d.uuid or "",
        "parent_uuid": d.parent_uuid or "",
        "product_name": d.product_name or "",
        "profile": d.profile or "",
        "architecture": d.architecture or "",
        "driver_version": str(d.driver_version or ""),
        "pci_bus_id": d.pci_bus_id or "",
        "memory_bytes": d.memory_bytes,
        "device_classes": match(d),
        "attributes": d.attributes,
        "capacity": d.capacity,
    }


DEVICE_FIELDS = [
    "slice", "node_name", "type", "type_raw", "uuid", "parent_uuid", "product_name", "profile",
    "architecture", "driver_version", "pci_bus_id", "memory_bytes", "device_classes", "attributes", "capacity",
]  # fmt: skip


def _sync_devices(cluster: Cluster, slices: Iterable[tuple[ResourceSlice, parse.ResourceSlice]], errors: list[str], reclassify: bool, counts: KindCounts) -> int:
    """Reconcile devices of changed slices in place (stable pks keep metrics and allocations)."""
    match = _class_matcher(cluster)
    written = 0
    by_slice = list(slices)
    if not by_slice and not reclassify:
        return 0
    slice_pks = [row.pk for row, _ in by_slice]
    existing: dict[tuple[str, str, str], Device] = {}
    for i in range(0, len(slice_pks), BULK):
        for dev in Device.objects.filter(slice_id__in=slice_pks[i : i + BULK]).only("pk", "driver", "pool", "name", "slice_id"):
            existing[(dev.driver, dev.pool, dev.name)] = dev
    wanted: dict[tuple[str, str, str], tuple[ResourceSlice, parse.Device]] = {}
    for row, parsed in by_slice:
        for d in parsed.devices:
            if d.key in wanted:
                errors.append(f"device {'/'.join(d.key)} published twice (slice {parsed.name}); kept the first")
                continue
            wanted[d.key] = (row, d)
    # A key already held by a slice that did not change is a duplicate publication: keep the old.
    changed_pks = set(slice_pks)
    new_pools = sorted({k[1] for k in wanted if k not in existing})
    elsewhere: set[tuple[str, str, str]] = set()
    for i in range(0, len(new_pools), BULK):
        for drv, pool, name, slice_id in Device.objects.filter(cluster=cluster, pool__in=new_pools[i : i + BULK]).values_list(
            "driver", "pool", "name", "slice_id"
        ):
            if slice_id not in changed_pks:
                elsewhere.add((drv, pool, name))
    create, update = [], []
    for key, (row, d) in wanted.items():
        if key in elsewhere:
            errors.append(f"device {'/'.join(key)} is also published by another slice; kept the first")
            continue
        fields = _device_fields(d, match)
        if key in existing:
            dev = existing.pop(key)
            for k, v in fields.items():
                setattr(dev, k, v)
            dev.slice = row
            update.append(dev)
        else:
            create.append(Device(cluster=cluster, slice=row, **fields))
    Device.objects.filter(pk__in=[d.pk for d in existing.values()]).delete()
    _insert_devices(create)
    Device.objects.bulk_update(update, DEVICE_FIELDS, batch_size=BULK)
    written += len(create) + len(update) + len(existing)
    counts.seen += len(wanted)
    counts.created += len(create)
    counts.updated += len(update)
    counts.deleted += len(existing)
    if reclassify:
        # DeviceClasses changed: every device's class list may change.
        changed = []
        for dev in Device.objects.filter(cluster=cluster).exclude(slice_id__in=slice_pks).select_related("slice"):
            classes = match(_device_from_row(dev))
            if classes != dev.device_classes:
                dev.device_classes = classes
                changed.append(dev)
        Device.objects.bulk_update(changed, ["device_classes"], batch_size=BULK)
        written += len(changed)
    return written


_DEVICE_INSERT_FIELDS = [f for f in Device._meta.concrete_fields if not f.primary_key]


def _insert_devices(devices: list[Device]) -> None:
    """INSERT new devices with ``executemany``, skipping per-row ORM preparation.

    A full sync of 1,000 nodes creates tens of thousands of devices; ``bulk_create`` spent
    most of the sync preparing each field of each row. Values go through each field's own
    ``get_db_prep_save`` so JSON and dates are encoded exactly as the ORM would.
    """
    if not devices:
        return
    table = connection.ops.quote_name(Device._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(f.column) for f in _DEVICE_INSERT_FIELDS)
    marks = ", ".join(["%s"] * len(_DEVICE_INSERT_FIELDS))
    sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"  # noqa: S608 - names from model metadata
    prep = [(f.attname, f.get_db_prep_save) for f in _DEVICE_INSERT_FIELDS]
    with connection.cursor() as cur:
        for i in range(0, len(devices), BULK):
            cur.executemany(
                sql,
                [tuple(p(getattr(d, a), connection) for a, p in prep) for d in devices[i : i + BULK]],
            )


def _device_from_row(dev: Device) -> parse.Device:
    return parse.Device(
        driver=dev.driver, pool=dev.pool, name=dev.name, node_name=dev.node_name or None,
        slice_name=dev.slice.name, type=dev.type_raw or dev.type, uuid=dev.uuid or None,
        parent_uuid=dev.parent_uuid or None, product_name=dev.product_name or None,
        profile=dev.profile or None, architecture=dev.architecture or None,
        driver_version=dev.driver_version or None, pci_bus_id=dev.pci_bus_id or None,
        memory_bytes=dev.memory_bytes, attributes=dev.attributes, capacity=dev.capacity,
    )  # fmt: skip


def _ensure_slice_nodes(cluster: Cluster, slices: Iterable[parse.ResourceSlice], node_objs: list[dict[str, Any]]) -> int:
    """Give every node a ResourceSlice names a Node row, even when no Node object was read.

    Such rows use the same stand-in uid an uid-less Node object would get (``Node//name``),
    are flagged ``from_slices``, and vanish when a complete Node list no longer has them.
    """
    named = {s.node_name for s in slices if s.node_name}
    named -= {str(_meta(o).get("name")) for o in node_objs}
    if not named:
        return 0
    have = set(Node.objects.filter(cluster=cluster, name__in=named).values_list("name", flat=True))
    products: dict[str, str] = {}
    for s in slices:
        for d in s.devices:
            if d.node_name and d.product_name and d.driver == parse.GPU_DRIVER:
                products.setdefault(d.node_name, d.product_name)
    rows = [
        Node(cluster=cluster, uid=f"Node//{n}", name=n, from_slices=True, gpu_product=products.get(n, ""))
        for n in sorted(named - have)
    ]
    Node.objects.bulk_create(rows, batch_size=BULK)
    return len(rows)


def _sync_claim_children(cluster: Cluster, rows: list[ResourceClaim]) -> set[str]:
    """Rebuild allocation results and reservations of changed claims; returns the nodes whose
    devices lost an allocation (their summaries must be refreshed)."""
    touched: set[str] = set()
    if not rows:
        return touched
    pks = [r.pk for r in rows]
    for i in range(0, len(pks), BULK):
        touched.update(
            AllocationResult.objects.filter(claim_id__in=pks[i : i + BULK], device__isnull=False).values_list(
                "device__node_name", flat=True
            )
        )
        AllocationResult.objects.filter(claim_id__in=pks[i : i + BULK]).delete()
        Reservation.objects.filter(claim_id__in=pks[i : i + BULK]).delete()
    results, reservations = [], []
    for row in rows:
        c = parse.parse_resource_claim(row.raw)
        for r in c.results:
            results.append(AllocationResult(claim=row, cluster=cluster, request=r.request, driver=r.driver, pool=r.pool, device_name=r.device))
        for ref in c.reserved_for:
            reservations.append(Reservation(claim=row, resource=ref.resource, name=ref.name, uid=ref.uid))
    AllocationResult.objects.bulk_create(results, batch_size=BULK)
    Reservation.objects.bulk_create(reservations, batch_size=BULK)
    return touched


def _resolve_allocations(cluster: Cluster) -> set[str]:
    """Point allocation results whose device is unknown at the device with their key;
    returns the nodes of the devices now resolved."""
    pending = list(AllocationResult.objects.filter(cluster=cluster, device__isnull=True).values_list("pk", "driver", "pool", "device_name"))
    if not pending:
        return set()
    pools = sorted({p for _, _, p, _ in pending})
    index: dict[tuple[str, str, str], tuple[int, str]] = {}
    for i in range(0, len(pools), BULK):
        for pk, drv, pool, name, node in Device.objects.filter(cluster=cluster, pool__in=pools[i : i + BULK]).values_list(
            "pk", "driver", "pool", "name", "node_name"
        ):
            index[(drv, pool, name)] = (pk, node)
    changed = [AllocationResult(pk=pk, device_id=index[(d, p, n)][0]) for pk, d, p, n in pending if (d, p, n) in index]
    AllocationResult.objects.bulk_update(changed, ["device"], batch_size=BULK)
    return {index[(d, p, n)][1] for _, d, p, n in pending if (d, p, n) in index}


def _refresh_node_summaries(cluster: Cluster, nodes: set[str] | None = None) -> int:
    """Recompute per-node device counts (all nodes, or only ``nodes``); write only rows that moved.

    One pass over the devices' small columns: a MIG-partitioned GPU is published only as
    its instances, so physical GPUs are whole-GPU uuids plus distinct MIG ``parentUUID``s.
    """
    zero = {"gpu_count": 0, "mig_count": 0, "allocated_count": 0, "free_count": 0, "device_count": 0}
    devs = Device.objects.filter(cluster=cluster)
    results = AllocationResult.objects.filter(cluster=cluster, device__isnull=False)
    node_rows = Node.objects.filter(cluster=cluster)
    if nodes is not None:
        if not nodes:
            return 0
        names = sorted(nodes)
        devs, results, node_rows = (
            devs.filter(node_name__in=names),
            results.filter(device__node_name__in=names),
            node_rows.filter(name__in=names),
        )
    allocated = set(results.values_list("device_id", flat=True))
    per_node: dict[str, dict[str, Any]] = defaultdict(lambda: {"devices": 0, "gpus": set(), "migs": 0, "alloc": 0, "gpu_devs": 0})
    for pk, node, driver, dtype, uuid, parent in devs.values_list("pk", "node_name", "driver", "type", "uuid", "parent_uuid"):
        acc = per_node[node]
        acc["devices"] += 1
        if driver != parse.GPU_DRIVER:
            continue
        acc["gpu_devs"] += 1
        if pk in allocated:
            acc["alloc"] += 1
        if dtype == DeviceType.GPU:
            acc["gpus"].add(uuid or f"pk:{pk}")
        elif dtype == DeviceType.MIG:
            acc["migs"] += 1
            acc["gpus"].add(parent or f"pk:{pk}")
    changed = []
    for node in node_rows.only("pk", "name", *zero):
        acc = per_node.get(node.name)
        want = dict(zero)
        if acc:
            want = {
                "gpu_count": len(acc["gpus"]), "mig_count": acc["migs"], "allocated_count": acc["alloc"],
                "free_count": acc["gpu_devs"] - acc["alloc"], "device_count": acc["devices"],
            }  # fmt: skip
        if any(getattr(node, k) != v for k, v in want.items()):
            for k, v in want.items():
                setattr(node, k, v)
            changed.append(node)
    Node.objects.bulk_update(changed, list(zero), batch_size=BULK)
    return len(changed)


def apply_read(cluster: Cluster, read: ReadResult) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Reconcile one ``ReadResult`` into the database. Returns (counts per kind, errors)."""
    errors = list(read.errors)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for obj in read.objects:
        spec = BY_KIND.get(str(obj.get("kind")))
        problem = parse.name_problem(obj, namespaced=spec.namespaced if spec else True)
        if problem:
            errors.append(problem)
            continue
        by_kind[str(obj.get("kind"))].append(obj)

    # Parse typed kinds up front: a malformed object becomes an error (and the run partial).
    slices_parsed: dict[str, parse.ResourceSlice] = {}
    good_slices = []
    for obj in by_kind.get("ResourceSlice", []):
        try:
            s = parse.parse_resource_slice(obj)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        slices_parsed[s.uid] = s
        good_slices.append(obj)
    by_kind["ResourceSlice"] = good_slices
    good_claims = []
    for obj in by_kind.get("ResourceClaim", []):
        try:
            parse.parse_resource_claim(obj)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        good_claims.append(obj)
    by_kind["ResourceClaim"] = good_claims

    counts: dict[str, KindCounts] = defaultdict(KindCounts)

    def may_delete(kind: str) -> bool:
        return not errors and kind in read.complete_kinds

    with transaction.atomic():
        node_plan = _plan(Node, cluster, by_kind.get("Node", []), may_delete("Node"), counts["Node"])
        _apply(Node, cluster, node_plan, _node_fields, counts["Node"])

        dc_plan = _plan(DeviceClass, cluster, by_kind.get("DeviceClass", []), may_delete("DeviceClass"), counts["DeviceClass"])
        _apply(DeviceClass, cluster, dc_plan, _device_class_fields, counts["DeviceClass"])
        classes_changed = bool(dc_plan.create or dc_plan.update or dc_plan.delete_pks)

        def slice_fields(obj: dict[str, Any]) -> dict[str, Any]:
            s = slices_parsed[parse.object_uid(obj)]
            return {
                **_base(obj),
                "driver": s.driver,
                "pool": s.pool,
                "pool_generation": s.pool_generation,
                "resource_slice_count": s.resource_slice_count,
                "node_name": s.node_name or "",
                "all_nodes": s.all_nodes,
                "device_count": len(s.devices),
            }

        sl_plan = _plan(ResourceSlice, cluster, by_kind["ResourceSlice"], may_delete("ResourceSlice"), counts["ResourceSlice"])
        created, updated = _apply(ResourceSlice, cluster, sl_plan, slice_fields, counts["ResourceSlice"])
        changed_slices = [(row, slices_parsed[row.uid]) for row in [*created, *updated]]
        dev_written = _sync_devices(cluster, changed_slices, errors, classes_changed, counts["Device"])

        _ensure_slice_nodes(cluster, slices_parsed.values(), by_kind.get("Node", []))

        cl_plan = _plan(ResourceClaim, cluster, by_kind["ResourceClaim"], may_delete("ResourceClaim"), counts["ResourceClaim"])
        created, updated = _apply(ResourceClaim, cluster, cl_plan, _claim_fields, counts["ResourceClaim"])
        touched = _sync_claim_children(cluster, [*created, *updated])
        touched |= _resolve_allocations(cluster)

        pod_plan = _plan(Pod, cluster, by_kind.get("Pod", []), may_delete("Pod"), counts["Pod"])
        _apply(Pod, cluster, pod_plan, _pod_fields, counts["Pod"])

        other = [o for k, objs in by_kind.items() if k not in TYPED_KINDS for o in objs]
        other_kinds = {k for k in by_kind if k not in TYPED_KINDS} | (read.complete_kinds - TYPED_KINDS)
        for kind in sorted(other_kinds):
            objs = [o for o in other if o.get("kind") == kind]
            plan = _plan(KubeObject, cluster, objs, may_delete(kind), counts[kind], extra=Q(kind=kind))
            _apply(KubeObject, cluster, plan, _kubeobject_fields, counts[kind])

        if dev_written or sl_plan.delete_pks or node_plan.create or node_plan.update or cl_plan.delete_pks:
            _refresh_node_summaries(cluster)  # the device set moved: recount every node
        elif touched:
            _refresh_node_summaries(cluster, touched)

    return {k: v.as_dict() for k, v in counts.items()}, errors


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
    cluster.save(update_fields=["last_sync_at", "last_sync_status", "server_version"])
    return run
