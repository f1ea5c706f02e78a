"""Row values of each stored kind, built from a raw v1 object (and its parsed record).

Pure apart from the model constants (``DeviceType``): each ``*_fields`` function returns a dict
of column attribute name -> value for ``inventory.bulk.insert_rows``/``update_rows``. ``raw``
is the object's own compact JSON text (``RawJSON``) when the source kept it, else the object.
"""

from __future__ import annotations

from typing import Any

from django.utils.dateparse import parse_datetime

from . import parse
from .bulk import RawJSON
from .models import DeviceType


def _dt(value: Any):
    """An aware datetime from an RFC 3339 string; None for anything else, including a
    well-formed but impossible date (``2026-02-30T00:00:00Z``), which Django raises on."""
    try:
        return parse_datetime(value) if isinstance(value, str) else None
    except ValueError:
        return None


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def base_fields(obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    m = meta(obj)
    return {
        "uid": parse.object_uid(obj),
        "name": str(m.get("name") or ""),
        "resource_version": str(m.get("resourceVersion") or ""),
        # The object's own compact text when the source kept it: stored without re-encoding.
        "raw": RawJSON(text) if text is not None else obj,
    }


def node_fields(obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    labels = meta(obj).get("labels") or {}
    return {
        **base_fields(obj, text),
        "labels": labels if isinstance(labels, dict) else {},
        "from_slices": False,
        "unschedulable": bool((obj.get("spec") or {}).get("unschedulable")),
        "ready": parse.node_ready(obj),
        "kubelet_version": parse.node_kubelet_version(obj),
        "gpu_product": str(labels.get("nvidia.com/gpu.product", "")) if isinstance(labels, dict) else "",
    }


def device_class_fields(obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    selectors = [
        s["cel"]["expression"]
        for s in spec.get("selectors") or []
        if isinstance(s, dict) and isinstance(s.get("cel"), dict) and isinstance(s["cel"].get("expression"), str)
    ]
    return {**base_fields(obj, text), "selectors": selectors, "extended_resource_name": str(spec.get("extendedResourceName") or "")}


def slice_fields(obj: dict[str, Any], text: str | None, s: parse.ResourceSlice) -> dict[str, Any]:
    return {
        **base_fields(obj, text),
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
        **base_fields(obj, text),
        "namespace": c.namespace,
        "state": c.state,
        "created": _dt(c.created),
        "allocated_at": _dt(c.allocation_timestamp),
        "deletion_timestamp": _dt(c.deletion_timestamp),
        "requests": [parse.request_summary(r) for r in c.requests],
        "device_count": len(c.results),
        "node_name": parse.allocation_node(obj) or "",
    }


def pod_fields(obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    m = meta(obj)
    return {
        **base_fields(obj, text),
        "namespace": str(m.get("namespace") or ""),
        "node_name": str((obj.get("spec") or {}).get("nodeName") or ""),
        "phase": str((obj.get("status") or {}).get("phase") or ""),
        "created": _dt(m.get("creationTimestamp")),
        "deletion_timestamp": _dt(m.get("deletionTimestamp")),
        "claim_names": parse.pod_claim_names(obj),
    }


def kubeobject_fields(obj: dict[str, Any], text: str | None) -> dict[str, Any]:
    m = meta(obj)
    return {
        **base_fields(obj, text),
        "kind": str(obj.get("kind")),
        "api_version": str(obj.get("apiVersion") or ""),
        "namespace": str(m.get("namespace") or ""),
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
