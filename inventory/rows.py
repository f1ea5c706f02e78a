"""Row values of each stored kind, built from the object's parsed record.

Pure apart from the model constants (``DeviceType``): each ``*_fields`` function returns a dict
of column attribute name -> value for ``inventory.bulk.insert_rows``/``update_rows``. The
values come from ``inventory.records`` (slices and claims arrive parsed; the other kinds are
parsed here, once); the raw object itself is only stored: ``raw`` is its own compact JSON text
(``RawJSON``) when the source kept it, else the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import parse, records
from .bulk import RawJSON
from .kinds import BY_KIND
from .kube import GPU_RESOURCE, MIG_RESOURCE_PREFIX, PRODUCT_LABEL, parse_time
from .models import DeviceType


def _dt(value: str | None) -> datetime | None:
    """An aware datetime from RFC 3339 text; None for anything else, including a well-formed
    but impossible date (``2026-02-30T00:00:00Z``)."""
    return parse_time(value)


meta = records.raw_metadata  # the sync's own bookkeeping of identities (``reconcile``)


def base_fields(r: records.KubeRecord, obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    return {
        "uid": r.uid,
        "name": r.name,
        "resource_version": r.resource_version,
        # The object's own compact text when the source kept it: stored without re-encoding.
        "raw": RawJSON(text) if text is not None else obj,
    }


def node_fields(obj: dict[str, Any], text: str | None, n: records.Node) -> dict[str, Any]:
    return {
        **base_fields(n, obj, text),
        "labels": dict(n.labels),
        "from_slices": False,
        "unschedulable": n.unschedulable,
        "ready": n.ready is not False,  # a node reporting no Ready condition is not shown as down
        "kubelet_version": n.kubelet_version or "",
        "gpu_product": n.labels.get(PRODUCT_LABEL, ""),
        "plugin_gpu_count": plugin_gpus(n.allocatable),
        "plugin_mig_count": plugin_migs(n.allocatable),
    }


def _count(value: object) -> int:
    text = str(value)
    return int(text) if text.isdecimal() and len(text) < 7 else 0


def plugin_gpus(allocatable: Mapping[str, str]) -> int:
    """The ``nvidia.com/gpu`` a node's ``status.allocatable`` holds (the device plugin's
    GPUs), 0 when it holds none or no whole number."""
    return _count(allocatable.get(GPU_RESOURCE, ""))


def plugin_migs(allocatable: Mapping[str, str]) -> int:
    """The ``nvidia.com/mig-<profile>`` a node's ``status.allocatable`` holds, summed: the
    device plugin's MIG instances under the mixed strategy, whose GPUs are no ``nvidia.com/gpu``."""
    return sum(_count(v) for k, v in allocatable.items() if k.startswith(MIG_RESOURCE_PREFIX))


def device_class_fields(obj: dict[str, Any], text: str | None, dc: records.DeviceClass) -> dict[str, Any]:
    return {**base_fields(dc, obj, text), "selectors": list(dc.selectors), "extended_resource_name": dc.extended_resource_name or ""}


def slice_fields(obj: dict[str, Any], text: str | None, s: parse.ResourceSlice) -> dict[str, Any]:
    return {
        **base_fields(s, obj, text),
        "driver": s.driver,
        "pool": s.pool,
        "pool_generation": s.pool_generation,
        "resource_slice_count": s.resource_slice_count,
        "node_name": s.node_name or "",
        "all_nodes": s.all_nodes,
        "device_count": len(s.devices),
    }


def claim_fields(obj: dict[str, Any], text: str | None, c: parse.ResourceClaim) -> dict[str, Any]:
    return {
        **base_fields(c, obj, text),
        "namespace": c.namespace,
        "state": c.state,
        "created": _dt(c.created),
        "allocated_at": _dt(c.allocation_timestamp),
        "deletion_timestamp": _dt(c.deletion_timestamp),
        "requests": [r.summary() for r in c.requests],
        "device_count": len(c.results),
        "node_name": c.allocation_node or "",
    }


def pod_fields(obj: dict[str, Any], text: str | None, p: records.Pod) -> dict[str, Any]:
    return {
        **base_fields(p, obj, text),
        "namespace": p.namespace or "",
        "node_name": p.node_name or "",
        "phase": p.phase or "",
        "created": _dt(p.created),
        "deletion_timestamp": _dt(p.deletion_timestamp),
        "claim_names": p.claim_names,
    }


def kubeobject_fields(obj: dict[str, Any], text: str | None, r: records.KubeRecord | None) -> dict[str, Any]:
    """Any other kind: only its identity is a column (its record's, or
    ``records.parse_identity`` for a kind the product keeps but does not read)."""
    if r is None:
        spec = BY_KIND.get(str(obj.get("kind")))
        r = records.parse_identity(obj, namespaced=spec.namespaced if spec else True)
    event = isinstance(r, records.Event)
    return {
        **base_fields(r, obj, text),
        "kind": r.kind,
        "api_version": r.api_version,
        "namespace": r.namespace or "",
        "subject_kind": (r.involved_kind or "") if event else "",
        "subject_name": (r.involved_name or "") if event else "",
    }


def device_fields(d: parse.Device, classes: list[str]) -> dict[str, Any]:
    dtype = d.type if d.type in (DeviceType.GPU, DeviceType.MIG) else DeviceType.OTHER
    return {
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
        "device_classes": classes,
        "capacity": d.capacity,
    }


DEVICE_FIELDS = ["slice_id", *device_fields(parse.Device("", "", "", None, "", "", *[None] * 8), [])]
