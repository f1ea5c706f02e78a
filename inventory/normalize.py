"""Bring DRA objects of any served version to the ``resource.k8s.io/v1`` shape.

Pure: no Django. Everything downstream (sync, diagnosis, planner) reads one shape.

Differences handled (from the Kubernetes API types, resource/v1beta1 vs v1):
- v1beta1 (and v1alpha3) ResourceSlice devices wrap their fields in ``basic``;
  v1beta2 and v1 put ``attributes``/``capacity`` on the device itself.
- v1alpha3 capacities are bare quantities; later versions use ``{value: <quantity>}``.
- v1beta1 claim/template requests carry ``deviceClassName``, ``selectors``,
  ``allocationMode``, ``count`` directly; v1beta2 and v1 nest them under ``exactly``.

A converted object gets ``apiVersion: resource.k8s.io/v1`` and remembers the version the
server sent under the top-level key ``x-claimscope-served-version`` (no API object uses it).
"""

from __future__ import annotations

import copy
from typing import Any

DRA_GROUP = "resource.k8s.io"
SERVED_VERSION_KEY = "x-claimscope-served-version"
KNOWN_DRA_VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")
_REQUEST_EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


class UnknownAPIVersion(ValueError):
    """A DRA object's apiVersion is not one this product can read."""


def _device_v1(dev: dict[str, Any]) -> dict[str, Any]:
    if "basic" in dev and isinstance(dev["basic"], dict):
        flat = {k: v for k, v in dev.items() if k != "basic"}
        flat.update(dev["basic"])
        dev = flat
    cap = dev.get("capacity")
    if isinstance(cap, dict):
        dev["capacity"] = {
            k: (v if isinstance(v, dict) else {"value": str(v)}) for k, v in cap.items()
        }
    return dev


def _request_v1(req: dict[str, Any]) -> dict[str, Any]:
    if "exactly" in req or "firstAvailable" in req:
        return req
    if not any(k in req for k in _REQUEST_EXACT_FIELDS):
        return req
    out: dict[str, Any] = {"name": req.get("name")}
    exactly = {k: req[k] for k in _REQUEST_EXACT_FIELDS if k in req}
    out["exactly"] = exactly
    for k, v in req.items():
        if k not in exactly and k != "name":
            out[k] = v
    return out


def _claim_spec_v1(spec: dict[str, Any]) -> None:
    devices = spec.get("devices")
    if isinstance(devices, dict) and isinstance(devices.get("requests"), list):
        devices["requests"] = [
            _request_v1(r) if isinstance(r, dict) else r for r in devices["requests"]
        ]


def normalize(obj: dict[str, Any]) -> dict[str, Any]:
    """Return ``obj`` in the v1 shape (a copy when anything changes).

    Non-DRA objects are returned unchanged. Raises ``UnknownAPIVersion`` for a
    ``resource.k8s.io`` version this code does not know.
    """
    api = obj.get("apiVersion")
    if not isinstance(api, str) or not api.startswith(DRA_GROUP + "/"):
        return obj
    version = api.split("/", 1)[1]
    if version not in KNOWN_DRA_VERSIONS:
        raise UnknownAPIVersion(f"unsupported API version {api!r} for {obj.get('kind')}")
    if version == "v1":
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{DRA_GROUP}/v1"
    out[SERVED_VERSION_KEY] = version
    kind = out.get("kind")
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    if kind == "ResourceSlice" and isinstance(spec.get("devices"), list):
        spec["devices"] = [_device_v1(d) if isinstance(d, dict) else d for d in spec["devices"]]
    elif kind == "ResourceClaim":
        _claim_spec_v1(spec)
    elif kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        _claim_spec_v1(spec["spec"])
    return out
