"""Typed records for the inventory, parsed from v1-shaped raw objects.

Pure: no Django. Input is a raw object already passed through ``normalize.normalize``;
output is frozen dataclasses with the fields pages filter and join on. The raw object is
kept by the caller beside these fields, so nothing the API adds later is lost.

Sources of each fact (``resource.k8s.io/v1`` ResourceSlice):
- ``spec.driver``, ``spec.pool.{name,generation,resourceSliceCount}``, ``spec.nodeName``
  (or ``spec.allNodes`` / ``spec.nodeSelector`` for network-attached pools);
- per device ``spec.devices[].name``, ``attributes`` (each holds exactly one of ``string``,
  ``int``, ``bool``, ``version``) and ``capacity`` (``{value: <quantity>}``).
NVIDIA's driver ``gpu.nvidia.com`` publishes unqualified attribute names (``uuid``,
``productName``, ``type``, ``profile``, ``parentUUID``...) which belong to the driver's
domain; ``resource.kubernetes.io/pciBusID`` is a standard qualified name.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from kubernetes.utils.quantity import parse_quantity as _k8s_parse_quantity

GPU_DRIVER = "gpu.nvidia.com"
# Largest memory a device can state that is still believable and storable (64-bit signed
# column): anything above is kept in ``capacity`` as published but read as unknown.
MAX_BYTES = 2**63 - 1
PCI_BUS_ID_ATTR = "resource.kubernetes.io/pciBusID"


def parse_quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity (``"81559Mi"``, ``"16"``, ``"1.5G"``) as a Decimal in base units.

    Returns None for anything that is not a valid quantity (never raises on cluster text).
    """
    if value is None:
        return None
    if type(value) is str:
        # A fleet repeats a handful of quantity strings thousands of times; Decimals are immutable.
        return _parse_quantity_text(value)
    return _parse_quantity_uncached(value)


def _parse_quantity_uncached(value: Any) -> Decimal | None:
    try:
        return Decimal(_k8s_parse_quantity(value))
    except (ValueError, TypeError, InvalidOperation):
        return None


@lru_cache(maxsize=8192)
def _parse_quantity_text(value: str) -> Decimal | None:
    return _parse_quantity_uncached(value)


_ATTRIBUTE_KINDS = ("string", "int", "bool", "version")
_ATTRIBUTE_KIND_SET = frozenset(_ATTRIBUTE_KINDS)


def attribute_value(attr: Any) -> Any:
    """The Python value of one DeviceAttribute (``{string|int|bool|version: x}``)."""
    if not isinstance(attr, dict):
        return None
    for key in _ATTRIBUTE_KINDS:
        if key in attr:
            return attr[key]
    return None


def _qualified(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


@dataclass(frozen=True)
class Device:
    """One device entry of a ResourceSlice, keyed like an allocation result names it.

    ``attributes``: fully qualified name (``gpu.nvidia.com/productName``) -> value.
    ``capacity``: fully qualified name -> quantity string as published.
    ``memory_bytes``: capacity ``memory`` in bytes (the driver publishes e.g. ``81559Mi``).
    ``type``: the driver's ``type`` attribute (``gpu``, ``mig``, ``vfio`` ...) or ``other``.
    """

    driver: str
    pool: str
    name: str
    node_name: str | None
    slice_name: str
    type: str
    uuid: str | None
    parent_uuid: str | None
    product_name: str | None
    profile: str | None
    architecture: str | None
    driver_version: str | None
    pci_bus_id: str | None
    memory_bytes: int | None
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=dict)
    consumes_counters: bool = False
    taints: tuple[dict[str, Any], ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        """(driver, pool, device): exactly what ``status.allocation.devices.results[]`` names."""
        return (self.driver, self.pool, self.name)

    def attr(self, name: str) -> Any:
        return self.attributes.get(_qualified(name, self.driver))


@dataclass(frozen=True)
class ResourceSlice:
    """A ResourceSlice: one pool's share of devices, usually one per node and driver."""

    uid: str
    name: str
    driver: str
    pool: str
    pool_generation: int
    resource_slice_count: int
    node_name: str | None
    all_nodes: bool
    devices: tuple[Device, ...]


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else (None if v is None else str(v))


def _int(v: Any, default: int = 0) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def object_uid(obj: dict[str, Any]) -> str:
    """``metadata.uid``, or a stable stand-in for objects published without one.

    Some real dumps (e.g. edited evidence files) carry no uid; the stand-in is
    ``kind/namespace/name`` so such objects still reconcile by identity.
    """
    meta = obj.get("metadata") or {}
    uid = meta.get("uid")
    return identity(str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")), uid if isinstance(uid, str) else "")


def identity(kind: str, namespace: str, name: str, uid: str) -> str:
    """``uid``, or the stand-in ``kind/namespace/name`` when it is empty (``object_uid``, and
    ``readitem.ReadItem`` from an item's identity read without decoding it)."""
    return uid or f"{kind}/{namespace}/{name}"


# Field order of ``Device``. ``parse_resource_slice`` fills a new instance's dict directly: the
# generated frozen ``__init__`` (one ``object.__setattr__`` per field) was a fifth of parsing.
_DEVICE_FIELDS = (
    "driver", "pool", "name", "node_name", "slice_name", "type", "uuid", "parent_uuid",
    "product_name", "profile", "architecture", "driver_version", "pci_bus_id", "memory_bytes",
    "attributes", "capacity", "consumes_counters", "taints",
)
# Guard for the shortcut: it is only equivalent while Device has exactly these fields and no
# __post_init__; change both together.
if tuple(f.name for f in fields(Device)) != _DEVICE_FIELDS or hasattr(Device, "__post_init__"):
    raise ImportError("inventory.parse: _DEVICE_FIELDS no longer matches the Device dataclass")
_new_object = object.__new__


def parse_resource_slice(obj: dict[str, Any]) -> ResourceSlice:
    """Parse a v1 ResourceSlice. Raises ``ValueError`` when ``spec.driver`` or pool is missing."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    driver = spec.get("driver")
    pool = spec.get("pool") or {}
    if not isinstance(driver, str) or not driver or not isinstance(pool.get("name"), str):
        raise ValueError(f"ResourceSlice {meta.get('name')!r} has no spec.driver or spec.pool.name")
    node = _str(spec.get("nodeName"))
    pool_name = pool["name"]
    slice_name = str(meta.get("name"))
    prefix = driver + "/"
    # The driver's unqualified names, qualified once per slice (as ``_qualified`` would).
    k_type, k_uuid, k_parent, k_product, k_profile, k_arch, k_drv, k_memory = (
        prefix + n
        for n in (
            "type", "uuid", "parentUUID", "productName", "profile", "architecture",
            "driverVersion", "memory",
        )
    )
    label = _DNS_LABEL.match
    intern = sys.intern
    new_object = _new_object
    kinds = _ATTRIBUTE_KIND_SET
    # Qualified names shared by every device of the slice (one string each, hash computed once).
    qualified: dict[str, str] = {}
    devices: list[Device] = []
    for d in spec.get("devices") or []:
        dname = d.get("name") if isinstance(d, dict) else None
        if not isinstance(dname, str):
            raise ValueError(f"ResourceSlice {meta.get('name')!r} has a device without a name")
        if len(dname) > 63 or not label(dname):
            raise ValueError(f"ResourceSlice {meta.get('name')!r}: device name {dname[:80]!r} is not a DNS label")
        raw_attrs, raw_caps = d.get("attributes") or {}, d.get("capacity") or {}
        if not isinstance(raw_attrs, dict) or not isinstance(raw_caps, dict):
            what = "attributes" if not isinstance(raw_attrs, dict) else "capacity"
            raise ValueError(f"ResourceSlice {meta.get('name')!r}: device {dname!r}: {what} is not a map")
        attrs: dict[str, Any] = {}
        for k, v in raw_attrs.items():
            qk = qualified.get(k)
            if qk is None:
                qk = qualified[k] = k if "/" in k else prefix + k
            if type(v) is dict and len(v) == 1:  # the usual shape: exactly one typed value
                [(kind, value)] = v.items()
                # Interned: a fleet repeats each product name, version and architecture on
                # thousands of devices; one string each keeps a whole-cluster state small.
                attrs[qk] = (intern(value) if type(value) is str else value) if kind in kinds else None
            else:
                attrs[qk] = attribute_value(v)
        caps: dict[str, str] = {}
        for k, v in raw_caps.items():
            if isinstance(v, dict):
                qk = qualified.get(k)
                if qk is None:
                    qk = qualified[k] = k if "/" in k else prefix + k
                q = v.get("value")
                caps[qk] = (q if type(q) is str else _str(q)) or ""
        mem = parse_quantity(caps.get(k_memory))
        dtype = attrs.get(k_type)
        g = attrs.get
        taints = d.get("taints")
        dev = new_object(Device)
        dev.__dict__.update(
            zip(
                _DEVICE_FIELDS,
                (
                    driver,
                    pool_name,
                    dname,
                    node,
                    slice_name,
                    str(dtype) if dtype else "other",
                    _str(g(k_uuid)),
                    _str(g(k_parent)),
                    _str(g(k_product)),
                    _str(g(k_profile)),
                    _str(g(k_arch)),
                    _str(g(k_drv)),
                    _str(g(PCI_BUS_ID_ATTR)),
                    int(mem) if mem is not None and 0 <= mem <= MAX_BYTES else None,
                    attrs,
                    caps,
                    bool(d.get("consumesCounters")),
                    tuple(t for t in taints if isinstance(t, dict)) if taints else (),
                ),
                strict=True,
            )
        )
        devices.append(dev)
    return ResourceSlice(
        uid=object_uid(obj),
        name=slice_name,
        driver=driver,
        pool=pool_name,
        pool_generation=_int(pool.get("generation")),
        resource_slice_count=_int(pool.get("resourceSliceCount"), 1),
        node_name=node,
        all_nodes=bool(spec.get("allNodes")),
        devices=tuple(devices),
    )


@dataclass(frozen=True)
class AllocationResult:
    """One ``status.allocation.devices.results[]`` entry of a ResourceClaim."""

    request: str
    driver: str
    pool: str
    device: str

    @property
    def device_key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True)
class ConsumerRef:
    """One ``status.reservedFor[]`` entry: usually a pod (``resource: pods``)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(frozen=True)
class ResourceClaim:
    """A ResourceClaim's identity, requests, allocation and consumers.

    ``requests``: the raw v1 request dicts. ``state`` is derived: ``deleting`` when
    ``metadata.deletionTimestamp`` is set, ``in_use`` when allocated and reserved,
    ``allocated`` when allocated with empty ``reservedFor``, else ``pending``.
    """

    uid: str
    namespace: str
    name: str
    created: str | None
    deletion_timestamp: str | None
    finalizers: tuple[str, ...]
    requests: tuple[dict[str, Any], ...]
    allocated: bool
    allocation_timestamp: str | None
    results: tuple[AllocationResult, ...]
    reserved_for: tuple[ConsumerRef, ...]
    owner_pod_uid: str | None
    pod_claim_name: str | None

    @property
    def state(self) -> str:
        if self.deletion_timestamp:
            return "deleting"
        if self.allocated:
            return "in_use" if self.reserved_for else "allocated"
        return "pending"


POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


def parse_resource_claim(obj: dict[str, Any]) -> ResourceClaim:
    """Parse a v1 ResourceClaim. Raises ``ValueError`` without a name or namespace."""
    meta = obj.get("metadata") or {}
    if not isinstance(meta.get("name"), str) or not isinstance(meta.get("namespace"), str):
        raise ValueError("ResourceClaim without metadata.name or metadata.namespace")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    alloc = status.get("allocation") if isinstance(status.get("allocation"), dict) else None
    results: list[AllocationResult] = []
    if alloc:
        for r in (alloc.get("devices") or {}).get("results") or []:
            if isinstance(r, dict):
                results.append(
                    AllocationResult(
                        request=str(r.get("request", "")),
                        driver=str(r.get("driver", "")),
                        pool=str(r.get("pool", "")),
                        device=str(r.get("device", "")),
                    )
                )
    reserved = tuple(
        ConsumerRef(
            resource=str(c.get("resource", "")),
            name=str(c.get("name", "")),
            uid=str(c.get("uid", "")),
            api_group=str(c.get("apiGroup", "")),
        )
        for c in status.get("reservedFor") or []
        if isinstance(c, dict)
    )
    owner_pod = next(
        (
            o.get("uid")
            for o in meta.get("ownerReferences") or []
            if isinstance(o, dict) and o.get("kind") == "Pod"
        ),
        None,
    )
    return ResourceClaim(
        uid=object_uid(obj),
        namespace=meta["namespace"],
        name=meta["name"],
        created=_str(meta.get("creationTimestamp")),
        deletion_timestamp=_str(meta.get("deletionTimestamp")),
        finalizers=tuple(str(f) for f in meta.get("finalizers") or []),
        requests=tuple(r for r in (spec.get("devices") or {}).get("requests") or [] if isinstance(r, dict)),
        allocated=alloc is not None,
        allocation_timestamp=_str(alloc.get("allocationTimestamp")) if alloc else None,
        results=tuple(results),
        reserved_for=reserved,
        owner_pod_uid=_str(owner_pod),
        pod_claim_name=_str((meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)),
    )


def request_summary(req: dict[str, Any]) -> dict[str, Any]:
    """Flatten a v1 request to ``{name, device_class, count, mode, selectors}``.

    For ``firstAvailable`` requests the first subrequest is summarized and
    ``alternatives`` counts them.
    """
    body = req.get("exactly")
    alternatives = 0
    if not isinstance(body, dict):
        subs = [s for s in req.get("firstAvailable") or [] if isinstance(s, dict)]
        alternatives = len(subs)
        body = subs[0] if subs else {}
    selectors = [
        s["cel"]["expression"]
        for s in body.get("selectors") or []
        if isinstance(s, dict) and isinstance(s.get("cel"), dict) and "expression" in s["cel"]
    ]
    mode = body.get("allocationMode") or "ExactCount"
    return {
        "name": req.get("name"),
        "device_class": body.get("deviceClassName"),
        "count": _int(body.get("count"), 1) if mode == "ExactCount" else None,
        "mode": mode,
        "selectors": selectors,
        "alternatives": alternatives,
    }


def pod_claim_names(obj: dict[str, Any]) -> list[str]:
    """Names of the ResourceClaims a Pod uses, in its own namespace.

    From ``spec.resourceClaims[].resourceClaimName`` (a shared claim) and, for claims
    generated from a ``resourceClaimTemplateName``, ``status.resourceClaimStatuses[]
    .resourceClaimName`` (absent until the claim is created).
    """
    names: list[str] = []
    for ref in (obj.get("spec") or {}).get("resourceClaims") or []:
        if isinstance(ref, dict) and isinstance(ref.get("resourceClaimName"), str):
            names.append(ref["resourceClaimName"])
    for st in (obj.get("status") or {}).get("resourceClaimStatuses") or []:
        if isinstance(st, dict) and isinstance(st.get("resourceClaimName"), str):
            names.append(st["resourceClaimName"])
    return list(dict.fromkeys(names))


def allocation_node(obj: dict[str, Any]) -> str | None:
    """The node a claim's allocation is pinned to, from ``status.allocation.nodeSelector``
    (``matchFields`` on ``metadata.name`` with operator ``In`` and one value), else None."""
    alloc = (obj.get("status") or {}).get("allocation") or {}
    terms = ((alloc.get("nodeSelector") or {}).get("nodeSelectorTerms")) or []
    for term in terms:
        for f in (term or {}).get("matchFields") or []:
            vals = f.get("values") or []
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(vals) == 1:
                return str(vals[0])
    return None


def node_kubelet_version(obj: dict[str, Any]) -> str:
    return str(((obj.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or "")


def node_ready(obj: dict[str, Any]) -> bool:
    """True unless the Node's ``Ready`` condition is present and not ``True``."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Kinds whose names the API server validates as DNS-1123 subdomains; other kinds only as path segments.
SUBDOMAIN_NAMED = frozenset({"Node", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod"})


def name_problem(obj: dict[str, Any], namespaced: bool = True) -> str | None:
    """Why ``metadata.name``/``namespace`` could not have come from an API server, or None.

    The API server rejects such names, so a snapshot holding one was edited or forged; storing
    it would put unroutable text into page links. Rules (Kubernetes apimachinery validation):
    namespaces are DNS-1123 labels (<= 63); names of the kinds in ``SUBDOMAIN_NAMED`` are
    DNS-1123 subdomains (<= 253); every other name is a path segment without ``/`` or ``%``.
    ``namespaced``: False for cluster-scoped kinds, whose ``metadata.namespace`` is not checked.
    """
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind"))
    name, ns = meta.get("name"), meta.get("namespace")
    shown = repr(name)[:80]
    if not isinstance(name, str) or not name:
        return f"{kind} without metadata.name"
    # A cluster-scoped object's namespace is ignored by the API server (samples carry placeholders).
    if namespaced and ns is not None and (not isinstance(ns, str) or len(ns) > 63 or not _DNS_LABEL.match(ns)):
        return f"{kind} {shown}: namespace {repr(ns)[:80]} is not a valid Kubernetes namespace"
    if kind in SUBDOMAIN_NAMED:
        if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
            return f"{kind} {shown}: not a valid Kubernetes name (DNS-1123 subdomain)"
    elif len(name) > 253 or "/" in name or "%" in name or name in (".", ".."):
        return f"{kind} {shown}: not a valid Kubernetes name"
    return None
