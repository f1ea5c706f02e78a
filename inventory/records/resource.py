"""Records of the ``resource.k8s.io`` kinds: DeviceClass, ResourceSlice (and its devices),
ResourceClaim, ResourceClaimTemplate, DeviceTaintRule.

Pure: no Django. Input is a raw object already in the v1 shape (``inventory.normalize``:
v1beta1/v1beta2/v1alpha3 give the same record as v1).

Sources of each fact (``resource.k8s.io/v1``):
- ResourceSlice ``spec.driver``, ``spec.pool.{name,generation,resourceSliceCount}``,
  ``spec.nodeName`` (or ``spec.allNodes``), ``spec.sharedCounters``; per device
  ``spec.devices[].name``, ``attributes`` (each exactly one of ``string``, ``int``, ``bool``,
  ``version``), ``capacity`` (``{value: <quantity>}``), ``consumesCounters``,
  ``allowMultipleAllocations``, ``taints``. NVIDIA's driver ``gpu.nvidia.com`` publishes
  unqualified attribute names (``uuid``, ``productName``, ``type``, ``profile``,
  ``parentUUID``...) that belong to the driver's domain; ``resource.kubernetes.io/pciBusID``
  is a standard qualified name.
- ResourceClaim ``spec.devices.requests[]`` (``exactly`` or ``firstAvailable``),
  ``spec.devices.constraints[]``, ``status.allocation.{devices.results[],nodeSelector,
  allocationTimestamp}``, ``status.reservedFor[]``, ``metadata.ownerReferences`` (the owning
  Pod) and the ``resource.kubernetes.io/pod-claim-name`` annotation.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from .base import (
    KubeRecord,
    Taint,
    Toleration,
    annotations,
    as_map,
    cel_expressions,
    dicts,
    finalizers,
    make,
    meta_fields,
    node_selector_terms,
    strings,
    taints,
    text,
    to_int,
    tolerations,
)

# Largest memory a device can state that is still believable and storable (64-bit signed
# column): anything above is kept in ``capacity`` as published but read as unknown.
MAX_BYTES = 2**63 - 1
def _load_quantity_parser() -> Any:
    """The kubernetes client's own quantity parser (``kubernetes/utils/quantity.py``), loaded
    as a file: importing it the usual way runs ``kubernetes/__init__``, which imports the
    whole API client (0.3-0.8 s of every command's start-up) for a module that needs only
    ``decimal``."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("kubernetes")  # locates the package without importing it
    path = Path(spec.submodule_search_locations[0]) / "utils" / "quantity.py"  # type: ignore[index,union-attr]
    mod_spec = importlib.util.spec_from_file_location("claimscope_kubernetes_quantity", path)
    module = importlib.util.module_from_spec(mod_spec)  # type: ignore[arg-type]
    mod_spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.parse_quantity


_k8s_parse_quantity = _load_quantity_parser()
PCI_BUS_ID_ATTR = "resource.kubernetes.io/pciBusID"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


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


# --- ResourceSlice ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    """One device entry of a ResourceSlice, keyed like an allocation result names it.

    ``attributes``: fully qualified name (``gpu.nvidia.com/productName``) -> value.
    ``capacity``: fully qualified name -> quantity string as published.
    ``memory_bytes``: capacity ``memory`` in bytes (the driver publishes e.g. ``81559Mi``).
    ``type``: the driver's ``type`` attribute (``gpu``, ``mig``, ``vfio`` ...) or ``other``.
    ``taints``: the device's own ``taints`` (DeviceTaintRules are matched by the reader).
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
    taints: tuple[Taint, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        """(driver, pool, device): exactly what ``status.allocation.devices.results[]`` names."""
        return (self.driver, self.pool, self.name)

    def attr(self, name: str) -> Any:
        return self.attributes.get(_qualified(name, self.driver))


@dataclass(frozen=True, slots=True)
class ResourceSlice(KubeRecord):
    """A ResourceSlice: one pool's share of devices, usually one per node and driver.

    ``shared_counters``: the slice declares ``sharedCounters`` (partitionable devices).
    ``allow_multiple``: names of devices with ``allowMultipleAllocations`` (they stay free
    when allocated).
    """

    NAMESPACED: ClassVar[bool] = False

    driver: str
    pool: str
    pool_generation: int
    resource_slice_count: int
    node_name: str | None
    all_nodes: bool
    devices: tuple[Device, ...]
    shared_counters: bool = False
    allow_multiple: frozenset[str] = frozenset()


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
    raise ImportError("inventory.records.resource: _DEVICE_FIELDS no longer matches the Device dataclass")
_new_object = object.__new__


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else (None if v is None else str(v))


def parse_resource_slice(obj: dict[str, Any]) -> ResourceSlice:
    """Parse a v1 ResourceSlice. Raises ``ValueError`` when ``spec.driver`` or pool is missing,
    or a device has no name, a name that is not a DNS label, or attributes/capacity that are
    not maps (what the API server would have refused)."""
    meta = as_map(obj.get("metadata"))
    spec = as_map(obj.get("spec"))
    driver = spec.get("driver")
    pool = as_map(spec.get("pool"))
    if not isinstance(driver, str) or not driver or not isinstance(pool.get("name"), str):
        raise ValueError(f"ResourceSlice {meta.get('name')!r} has no spec.driver or spec.pool.name")
    node = _str(spec.get("nodeName"))
    pool_name = pool["name"]
    slice_name = str(meta.get("name") or "")
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
    multiple: list[str] = []
    raw_devices = spec.get("devices")
    for d in raw_devices if isinstance(raw_devices, list) else ():
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
        device_taints = d.get("taints")
        if d.get("allowMultipleAllocations"):
            multiple.append(dname)
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
                    taints(device_taints) if device_taints else (),
                ),
                strict=True,
            )
        )
        devices.append(dev)
    return ResourceSlice(
        *meta_fields(obj, namespaced=False),
        driver=driver,
        pool=pool_name,
        pool_generation=to_int(pool.get("generation")),
        resource_slice_count=to_int(pool.get("resourceSliceCount"), 1),
        node_name=node,
        all_nodes=bool(spec.get("allNodes")),
        devices=tuple(devices),
        shared_counters=bool(spec.get("sharedCounters")),
        allow_multiple=frozenset(multiple),
    )


# --- requests (claims and templates) -----------------------------------------------------------


class DeviceSubRequest(NamedTuple):
    """What one request asks for: its ``exactly`` body, or one ``firstAvailable`` alternative.

    ``name``: the alternative's name (None for ``exactly``). ``allocation_mode``: as written,
    ``ExactCount`` when absent. ``count``: devices asked for (``count``, default 1) in
    ``ExactCount`` mode, None for ``All``. ``capacity``: ``capacity.requests`` (name,
    quantity text) pairs (consumable capacity).
    """

    name: str | None
    device_class: str | None
    selectors: tuple[str, ...]
    allocation_mode: str
    count: int | None
    admin_access: bool
    tolerations: tuple[Toleration, ...]
    capacity: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, body: dict[str, Any], name: Any = None) -> DeviceSubRequest:
        mode = text(body.get("allocationMode")) or "ExactCount"
        caps = as_map(as_map(body.get("capacity")).get("requests"))
        return make(cls, (
            text(name),
            text(body.get("deviceClassName")),
            cel_expressions(body.get("selectors")),
            mode,
            to_int(body.get("count"), 1) if mode == "ExactCount" else None,
            body.get("adminAccess") is True,
            tolerations(body.get("tolerations")),
            tuple((str(k), str(v)) for k, v in caps.items() if not isinstance(v, dict | list)),
        ))


_NO_BODY = DeviceSubRequest(None, None, (), "ExactCount", 1, False, (), ())


class DeviceRequest(NamedTuple):
    """One ``spec.devices.requests[]`` entry (v1 shape).

    ``exactly``: the request body, or None. ``first_available``: the prioritized
    alternatives in order, None when the request has no ``firstAvailable`` list.
    """

    name: str | None
    exactly: DeviceSubRequest | None
    first_available: tuple[DeviceSubRequest, ...] | None

    @classmethod
    def parse(cls, req: dict[str, Any]) -> DeviceRequest:
        exactly = req.get("exactly")
        alternatives = req.get("firstAvailable")
        return make(cls, (
            text(req.get("name")),
            DeviceSubRequest.parse(exactly) if isinstance(exactly, dict) else None,
            tuple(DeviceSubRequest.parse(s, s.get("name")) for s in dicts(alternatives)) if "firstAvailable" in req else None,
        ))

    @property
    def bodies(self) -> tuple[DeviceSubRequest, ...]:
        """What can satisfy the request: ``exactly``, else each alternative in order."""
        if self.exactly is not None:
            return (self.exactly,)
        return self.first_available or ()

    @property
    def main(self) -> DeviceSubRequest:
        """``exactly``, else the first alternative, else an empty body (one device, no class)."""
        bodies = self.bodies
        return bodies[0] if bodies else _NO_BODY

    def summary(self) -> dict[str, Any]:
        """``{name, device_class, count, mode, selectors, alternatives}``: the request flattened
        (for ``firstAvailable`` the first alternative, ``alternatives`` counting them)."""
        body = self.main
        return {
            "name": self.name,
            "device_class": body.device_class,
            "count": body.count,
            "mode": body.allocation_mode,
            "selectors": list(body.selectors),
            "alternatives": len(self.first_available or ()) if self.exactly is None else 0,
        }


def request_summary(req: dict[str, Any]) -> dict[str, Any]:
    """``DeviceRequest.summary`` of one raw v1 request dict."""
    return DeviceRequest.parse(req).summary()


class DeviceConstraint(NamedTuple):
    """One ``spec.devices.constraints[]`` entry: the requests it spans (empty: all) and the
    attribute whose value must match, or must differ, across them."""

    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None

    @classmethod
    def parse(cls, c: dict[str, Any]) -> DeviceConstraint:
        return make(cls, (strings(c.get("requests")), text(c.get("matchAttribute")), text(c.get("distinctAttribute"))))


def _requests(devices: dict[str, Any]) -> tuple[DeviceRequest, ...]:
    return tuple(DeviceRequest.parse(r) for r in dicts(devices.get("requests")))


def _constraints(devices: dict[str, Any]) -> tuple[DeviceConstraint, ...]:
    return tuple(DeviceConstraint.parse(c) for c in dicts(devices.get("constraints")))


# --- ResourceClaim ------------------------------------------------------------------------------


class AllocationResult(NamedTuple):
    """One ``status.allocation.devices.results[]`` entry of a ResourceClaim, with the
    tolerations the scheduler copied into it."""

    request: str
    driver: str
    pool: str
    device: str
    tolerations: tuple[Toleration, ...] = ()
    # ``consumedCapacity`` (name -> quantity string as written) of a device that allows
    # multiple allocations: the claim's part of a shared device (chargeback reads it).
    consumed_capacity: tuple[tuple[str, str], ...] = ()

    @property
    def device_key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


class ConsumerRef(NamedTuple):
    """One ``status.reservedFor[]`` entry: usually a pod (``resource: pods``)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim(KubeRecord):
    """A ResourceClaim's identity, requests, allocation and consumers.

    ``state`` is derived: ``deleting`` when ``metadata.deletionTimestamp`` is set, ``in_use``
    when allocated and reserved, ``allocated`` when allocated with empty ``reservedFor``, else
    ``pending``. ``allocation_nodes``: the node names ``status.allocation.nodeSelector`` pins
    it to (``matchFields`` on ``metadata.name``, operator ``In``); ``allocation_node``: the
    single node of the first such field with one value (what the claim list shows), else None.
    ``owner_pod_uid``/``pod_claim_name``: the Pod that owns it and the pod's claim entry it was
    made for (``resource.kubernetes.io/pod-claim-name``).
    """

    namespace: str
    finalizers: tuple[str, ...]
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]
    allocated: bool
    allocation_timestamp: str | None
    results: tuple[AllocationResult, ...]
    reserved_for: tuple[ConsumerRef, ...]
    owner_pod_uid: str | None
    pod_claim_name: str | None
    allocation_nodes: tuple[str, ...]
    allocation_node: str | None

    @property
    def state(self) -> str:
        if self.deletion_timestamp:
            return "deleting"
        if self.allocated:
            return "in_use" if self.reserved_for else "allocated"
        return "pending"

    @property
    def has_owner(self) -> bool:
        return bool(self.owners)

    def request(self, name: str) -> DeviceRequest | None:
        return next((r for r in self.requests if r.name == name), None)


def _consumed(v: Any) -> tuple[tuple[str, str], ...]:
    """``results[].consumedCapacity`` as (name, quantity text) pairs; () when absent."""
    if not isinstance(v, dict) or not v:
        return ()
    return tuple((str(k), t) for k, q in v.items() if (t := text(q)) is not None)


def _allocation_nodes(alloc: dict[str, Any]) -> tuple[tuple[str, ...], str | None]:
    nodes: list[str] = []
    single = None
    for term in node_selector_terms(alloc.get("nodeSelector")):
        for f in term.match_fields:
            if f.key == "metadata.name" and f.operator == "In":
                nodes.extend(f.values)
                if single is None and len(f.values) == 1:
                    single = f.values[0]
    return tuple(nodes), single


def parse_resource_claim(obj: dict[str, Any]) -> ResourceClaim:
    """Parse a v1 ResourceClaim. Raises ``ValueError`` without a name or namespace."""
    meta = as_map(obj.get("metadata"))
    if not isinstance(meta.get("name"), str) or not isinstance(meta.get("namespace"), str):
        raise ValueError("ResourceClaim without metadata.name or metadata.namespace")
    devices = as_map(as_map(obj.get("spec")).get("devices"))
    status = as_map(obj.get("status"))
    alloc = status.get("allocation") if isinstance(status.get("allocation"), dict) else None
    results: list[AllocationResult] = []
    nodes: tuple[str, ...] = ()
    node = None
    if alloc:
        for r in dicts(as_map(alloc.get("devices")).get("results")):
            results.append(
                make(AllocationResult, (
                    str(r.get("request", "")),
                    str(r.get("driver", "")),
                    str(r.get("pool", "")),
                    str(r.get("device", "")),
                    tolerations(r.get("tolerations")),
                    _consumed(r.get("consumedCapacity")),
                ))
            )
        nodes, node = _allocation_nodes(alloc)
    reserved = tuple(
        make(ConsumerRef, (
            str(c.get("resource", "")),
            str(c.get("name", "")),
            str(c.get("uid", "")),
            str(c.get("apiGroup", "")),
        ))
        for c in dicts(status.get("reservedFor"))
    )
    base = meta_fields(obj, namespaced=True)
    owner_pod = next((o.uid for o in base[9] if o.kind == "Pod"), None)
    if base[3] != meta["namespace"]:  # written as "": kept as written (the sync refuses it)
        base = (*base[:3], meta["namespace"], *base[4:])
    return ResourceClaim(
        *base,
        finalizers=finalizers(obj),
        requests=_requests(devices),
        constraints=_constraints(devices),
        allocated=alloc is not None,
        allocation_timestamp=_str(alloc.get("allocationTimestamp")) if alloc else None,
        results=tuple(results),
        reserved_for=reserved,
        owner_pod_uid=owner_pod or None,
        pod_claim_name=_str(annotations(obj).get(POD_CLAIM_NAME_ANNOTATION)),
        allocation_nodes=nodes,
        allocation_node=node,
    )


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate(KubeRecord):
    """A ResourceClaimTemplate: the requests and constraints (``spec.spec.devices``) of the
    claims made from it."""

    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]


def parse_resource_claim_template(obj: dict[str, Any]) -> ResourceClaimTemplate:
    devices = as_map(as_map(as_map(obj.get("spec")).get("spec")).get("devices"))
    return ResourceClaimTemplate(*meta_fields(obj, namespaced=True), requests=_requests(devices),
                                 constraints=_constraints(devices))


# --- DeviceClass, DeviceTaintRule ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceClass(KubeRecord):
    """A DeviceClass: its CEL ``spec.selectors`` and ``spec.extendedResourceName`` (the
    extended resource it serves under DRAExtendedResource), None when unset."""

    NAMESPACED: ClassVar[bool] = False

    selectors: tuple[str, ...]
    extended_resource_name: str | None


def parse_device_class(obj: dict[str, Any]) -> DeviceClass:
    spec = as_map(obj.get("spec"))
    return DeviceClass(*meta_fields(obj, namespaced=False), selectors=cel_expressions(spec.get("selectors")),
                       extended_resource_name=text(spec.get("extendedResourceName")) or None)


@dataclass(frozen=True, slots=True)
class DeviceTaintRule(KubeRecord):
    """A DeviceTaintRule: ``spec.deviceSelector`` {driver, pool, device, selectors} and
    ``spec.taint`` (None when absent)."""

    NAMESPACED: ClassVar[bool] = False

    driver: str | None
    pool: str | None
    device: str | None
    selectors: tuple[str, ...]
    taint: Taint | None

    @property
    def selector_empty(self) -> bool:
        return not (self.driver or self.pool or self.device or self.selectors)


def parse_device_taint_rule(obj: dict[str, Any]) -> DeviceTaintRule:
    spec = as_map(obj.get("spec"))
    sel = as_map(spec.get("deviceSelector"))
    taint = spec.get("taint")
    return DeviceTaintRule(
        *meta_fields(obj, namespaced=False),
        driver=text(sel.get("driver")),
        pool=text(sel.get("pool")),
        device=text(sel.get("device")),
        selectors=cel_expressions(sel.get("selectors")),
        taint=Taint.parse(taint) if isinstance(taint, dict) and taint else None,
    )
