"""Raw objects cut to what the readiness checklist reads, for callers that stream a large
stored cluster (``migration.evaluation``): the same checklist, a fraction of the memory.

Pure: no Django. Part of the parse layer because it reads raw fields; the cut objects are
parsed like any other (``inventory.records.parse_object``).
"""

from __future__ import annotations

from typing import Any

from inventory.normalize import UnknownAPIVersion, normalize

from .base import as_map


def slim_slice(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of a ResourceSlice the checklist reads: kind, version, name, ``spec.driver``,
    ``spec.pool``, ``spec.nodeName`` and each device's name and ``driverVersion`` attribute. A
    1,000-node fleet's slices are mostly device attributes the checklist never looks at.
    Older served versions are normalized to v1 first (v1beta1 devices hold attributes under
    ``basic``)."""
    try:
        obj = normalize(obj)
    except UnknownAPIVersion:
        return obj  # the checklist skips it, as it would the full object
    spec = as_map(obj.get("spec"))
    devices = []
    for d in spec.get("devices") or []:
        if not isinstance(d, dict):
            continue
        attrs = as_map(d.get("attributes"))
        keep = {k: v for k, v in attrs.items() if k.rpartition("/")[2] == "driverVersion"}
        devices.append({"name": d.get("name"), "attributes": keep})
    meta = as_map(obj.get("metadata"))
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in ("name", "uid") if k in meta},
        "spec": {**{k: spec[k] for k in ("driver", "pool", "nodeName", "allNodes") if k in spec}, "devices": devices},
    }


def slim_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of a Pod the checklist reads: name, namespace, uid, labels, ownerReferences,
    ``spec.nodeName``, ``spec.resourceClaims``, each container's name, image and resources,
    and ``status.phase``. A pod's volumes, env, probes and statuses are most of its size."""
    meta = as_map(obj.get("metadata"))
    spec = as_map(obj.get("spec"))
    status = as_map(obj.get("status"))
    out_spec: dict[str, Any] = {k: spec[k] for k in ("nodeName", "resourceClaims") if k in spec}
    for key in ("initContainers", "containers"):
        if isinstance(spec.get(key), list):
            out_spec[key] = [
                {k: c[k] for k in ("name", "image", "resources") if k in c} if isinstance(c, dict) else c
                for c in spec[key]
            ]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "labels", "ownerReferences") if k in meta},
        "spec": out_spec,
        "status": {k: status[k] for k in ("phase",) if k in status},
    }


def slim_object(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` cut to what the readiness checklist reads (ResourceSlices and Pods, the bulk of
    a large cluster; other kinds as they are)."""
    kind = obj.get("kind")
    if kind == "ResourceSlice":
        return slim_slice(obj)
    if kind == "Pod":
        return slim_pod(obj)
    return obj
