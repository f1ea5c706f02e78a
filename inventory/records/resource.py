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
    INT64,
    Condition,
    KubeRecord,
    Taint,
    Toleration,
    annotations,
    as_list,
    as_map,
    cel_expressions,
    conditions,
    dicts,
    finalizers,
    make,
    meta_fields,
    node_selector_terms,
    shape_paths,
    shape_problem,
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
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
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
        q = Decimal(_k8s_parse_quantity(value))
    except (ValueError, TypeError, InvalidOperation):
        return None
    # The parser takes "NaN", "sNaN" and "Infinity" as Decimal does; Kubernetes refuses them,
    # and a NaN raises in every comparison the capacity arithmetic makes.
    return q if q.is_finite() else None


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


def _counters(v: Any) -> dict[str, Decimal]:
    """A ``counters`` map (name -> ``{value: <quantity>}``) as name -> Decimal in base units;
    a counter whose value is not a quantity is left out."""
    out: dict[str, Decimal] = {}
    for k, c in as_map(v).items():
        q = parse_quantity(c.get("value")) if isinstance(c, dict) else None
        if q is not None:
            out[str(k)] = q
    return out


class CounterSet(NamedTuple):
    """One ``spec.sharedCounters[]`` entry of a ResourceSlice: ``name`` and its ``counters``
    (counter name -> amount in base units: ``memory`` in bytes, ``multiprocessors`` a count)."""

    name: str
    counters: dict[str, Decimal]

    @classmethod
    def parse(cls, v: dict[str, Any]) -> CounterSet:
        return make(cls, (str(v.get("name") or ""), _counters(v.get("counters"))))


class CounterConsumption(NamedTuple):
    """One ``devices[].consumesCounters[]`` entry: the ``counterSet`` (by name, in the same
    pool) and the amounts of its counters the device takes when allocated (base units)."""

    counter_set: str
    counters: dict[str, Decimal]

    @classmethod
    def parse(cls, v: dict[str, Any]) -> CounterConsumption:
        return make(cls, (str(v.get("counterSet") or ""), _counters(v.get("counters"))))


class CapacityPolicy(NamedTuple):
    """``capacity.<name>.requestPolicy`` (consumable capacity): ``default`` (what a request
    that names no amount consumes), ``valid_values``, ``valid_range`` (min, max, step); all
    quantity text as published, None when unset."""

    default: str | None
    valid_values: tuple[str, ...]
    valid_range: tuple[str | None, str | None, str | None] | None

    @classmethod
    def parse(cls, v: dict[str, Any]) -> CapacityPolicy:
        rng = v.get("validRange")
        return make(cls, (
            text(v.get("default")),
            strings(v.get("validValues")),
            (text(rng.get("min")), text(rng.get("max")), text(rng.get("step"))) if isinstance(rng, dict) else None,
        ))


@dataclass(frozen=True)
class Device:
    """One device entry of a ResourceSlice, keyed like an allocation result names it.

    ``attributes``: fully qualified name (``gpu.nvidia.com/productName``) -> value.
    ``capacity``: fully qualified name -> quantity string as published.
    ``memory_bytes``: capacity ``memory`` in bytes (the driver publishes e.g. ``81559Mi``).
    ``type``: the driver's ``type`` attribute (``gpu``, ``mig``, ``vfio`` ...) or ``other``.
    ``taints``: the device's own ``taints`` (DeviceTaintRules are matched by the reader).
    ``consumes_counters``: ``consumesCounters[]`` (partitionable devices: which counter set of
    its pool, ``spec.sharedCounters``, it draws on and how much); empty when it draws on none.
    ``allow_multiple_allocations``: ``allowMultipleAllocations`` (consumable capacity: several
    claims may share it while its capacity lasts). ``capacity_policies``: capacity name ->
    ``capacity.<name>.requestPolicy`` (``CapacityPolicy``) where the driver set one.
    ``binds_to_node``, ``binding_conditions``, ``binding_failure_conditions``: as published
    (DRADeviceBindingConditions: the scheduler waits for the conditions on the claim's
    ``status.devices[]`` before binding the pod).
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
    consumes_counters: tuple[CounterConsumption, ...] = ()
    taints: tuple[Taint, ...] = ()
    allow_multiple_allocations: bool = False
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    capacity_policies: dict[str, CapacityPolicy] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        """(driver, pool, device): exactly what ``status.allocation.devices.results[]`` names."""
        return (self.driver, self.pool, self.name)

    def attr(self, name: str) -> Any:
        return self.attributes.get(_qualified(name, self.driver))

    def capacity_value(self, name: str) -> Decimal | None:
        """``capacity[name].value`` parsed (base units), None when absent or not a quantity."""
        return parse_quantity(self.capacity.get(_qualified(name, self.driver)))


@dataclass(frozen=True, slots=True)
class ResourceSlice(KubeRecord):
    """A ResourceSlice: one pool's share of devices, usually one per node and driver.

    ``shared_counters``: ``spec.sharedCounters[]`` (partitionable devices; NVIDIA's dynamic
    MIG publishes them in a slice of their own, without devices, in the devices' pool).
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
    shared_counters: tuple[CounterSet, ...] = ()
    allow_multiple: frozenset[str] = frozenset()


# Field order of ``Device``. ``parse_resource_slice`` fills a new instance's dict directly: the
# generated frozen ``__init__`` (one ``object.__setattr__`` per field) was a fifth of parsing.
_DEVICE_FIELDS = (
    "driver", "pool", "name", "node_name", "slice_name", "type", "uuid", "parent_uuid",
    "product_name", "profile", "architecture", "driver_version", "pci_bus_id", "memory_bytes",
    "attributes", "capacity", "consumes_counters", "taints", "allow_multiple_allocations", "binds_to_node",
    "binding_conditions", "binding_failure_conditions", "capacity_policies",
)
# Guard for the shortcut: it is only equivalent while Device has exactly these fields and no
# __post_init__; change both together.
if tuple(f.name for f in fields(Device)) != _DEVICE_FIELDS or hasattr(Device, "__post_init__"):
    raise ImportError("inventory.records.resource: _DEVICE_FIELDS no longer matches the Device dataclass")
_new_object = object.__new__


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else (None if v is None else str(v))


_SLICE_SHAPES = shape_paths("spec{}", "spec.pool{}", "spec.devices[]", "spec.sharedCounters[]", "spec.nodeSelector{}")
_CLAIM_SHAPES = shape_paths(
    "spec{}", "spec.devices{}", "spec.devices.requests[]", "spec.devices.constraints[]", "spec.devices.config[]",
    "status{}", "status.allocation{}", "status.allocation.devices{}", "status.allocation.devices.results[]",
    "status.reservedFor[]", "status.devices[]",
)


def parse_resource_slice(obj: dict[str, Any]) -> ResourceSlice:
    """Parse a v1 ResourceSlice. Raises ``ValueError`` when ``spec.driver`` or pool is missing,
    a field that holds devices is of the wrong JSON type, or a device has no name, a name that
    is not a DNS label, or attributes/capacity that are not maps (what the API server would
    have refused)."""
    meta = as_map(obj.get("metadata"))
    if (problem := shape_problem(obj, _SLICE_SHAPES)) is not None:
        raise ValueError(f"ResourceSlice {meta.get('name')!r}: {problem}")
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
        policies: dict[str, CapacityPolicy] = {}
        for k, v in raw_caps.items():
            if isinstance(v, dict):
                qk = qualified.get(k)
                if qk is None:
                    qk = qualified[k] = k if "/" in k else prefix + k
                q = v.get("value")
                caps[qk] = (q if type(q) is str else _str(q)) or ""
                policy = v.get("requestPolicy")
                if policy and isinstance(policy, dict):
                    policies[qk] = CapacityPolicy.parse(policy)
        mem = parse_quantity(caps.get(k_memory))
        dtype = attrs.get(k_type)
        g = attrs.get
        device_taints = d.get("taints")
        consumes = d.get("consumesCounters")
        allow_multiple = d.get("allowMultipleAllocations") is True
        if allow_multiple:
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
                    tuple(CounterConsumption.parse(c) for c in dicts(consumes)) if consumes else (),
                    taints(device_taints) if device_taints else (),
                    allow_multiple,
                    d.get("bindsToNode") is True,
                    strings(d.get("bindingConditions")),
                    strings(d.get("bindingFailureConditions")),
                    policies,
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
        shared_counters=tuple(CounterSet.parse(c) for c in dicts(spec.get("sharedCounters"))),
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
    """One ``status.allocation.devices.results[]`` entry of a ResourceClaim.

    ``request``: as written: the request's name, or ``<request>/<subrequest>`` when a
    ``firstAvailable`` alternative was chosen. ``tolerations``: those the scheduler copied
    in. ``admin_access``: ``adminAccess`` (a monitoring claim: the device is not taken).
    ``share_id``: ``shareID`` (one share of a device with ``allowMultipleAllocations``).
    ``consumed_capacity``: ``consumedCapacity`` as (capacity name as written, quantity text)
    pairs: the claim's part of a shared device (chargeback reads it too).
    ``binding_conditions``/``binding_failure_conditions``: copied from the device; the pod is
    bound only once every binding condition is True on the claim's ``status.devices[]``.
    """

    request: str
    driver: str
    pool: str
    device: str
    tolerations: tuple[Toleration, ...] = ()
    consumed_capacity: tuple[tuple[str, str], ...] = ()
    admin_access: bool = False
    share_id: str | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()

    @property
    def device_key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)

    @property
    def main_request(self) -> str:
        """The claim's request this result satisfies (``req`` of ``req/sub``)."""
        return self.request.split("/", 1)[0]

    @property
    def subrequest(self) -> str | None:
        """The chosen ``firstAvailable`` alternative (``sub`` of ``req/sub``), else None."""
        parts = self.request.split("/", 1)
        return parts[1] if len(parts) == 2 else None

    def consumed(self, name: str) -> Decimal | None:
        """``consumedCapacity[name]`` in base units (name qualified or as the driver wrote it);
        None for a negative one (the API server refuses it; counted, it would give capacity
        back to the device)."""
        short = name[len(self.driver) + 1:] if name.startswith(self.driver + "/") else None
        q = parse_quantity(next((v for k, v in self.consumed_capacity if k == name or k == short), None))
        return q if q is None or q >= 0 else None


class DeviceStatus(NamedTuple):
    """One ``status.devices[]`` entry of a ResourceClaim (what the driver reports about an
    allocated device): ``driver``/``pool``/``device``/``share_id`` name the allocation it is
    about; ``conditions`` (metav1 Conditions, e.g. ``Ready`` or a binding condition);
    ``data``: the driver's opaque ``data`` as decoded JSON (None when absent);
    ``network_data``: ``networkData`` as written."""

    driver: str
    pool: str
    device: str
    share_id: str | None
    conditions: tuple[Condition, ...]
    data: Any
    network_data: dict[str, Any]

    @property
    def device_key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)

    def condition(self, ctype: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == ctype), None)


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
    made for (``resource.kubernetes.io/pod-claim-name``). ``device_statuses``:
    ``status.devices[]`` (``DeviceStatus``). ``extended_resource_claim``: the scheduler made it
    for a pod's extended-resource request (annotation
    ``resource.kubernetes.io/extended-resource-claim: "true"``; the pod names it in
    ``status.extendedResourceClaimStatus``).
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
    device_statuses: tuple[DeviceStatus, ...] = ()
    extended_resource_claim: bool = False

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

    @property
    def admin_access(self) -> bool:
        """Every allocated result has ``adminAccess`` (or, unallocated, every request asks
        for it): a monitoring claim that takes no device."""
        if self.results:
            return all(r.admin_access for r in self.results)
        bodies = [b for r in self.requests for b in r.bodies]
        return bool(bodies) and all(b.admin_access for b in bodies)

    @property
    def chosen_subrequests(self) -> dict[str, str]:
        """request name -> the ``firstAvailable`` alternative the allocation chose."""
        return {r.main_request: r.subrequest for r in self.results if r.subrequest is not None}

    @property
    def binding_conditions_pending(self) -> tuple[tuple[AllocationResult, str], ...]:
        """(result, condition type) for each binding condition not yet True on the matching
        ``status.devices[]`` entry: the scheduler waits for these before binding the pod."""
        out = []
        for r in self.results:
            if not r.binding_conditions:
                continue
            st = self.device_status(r)
            for ctype in r.binding_conditions:
                c = st.condition(ctype) if st else None
                if c is None or c.status != "True":
                    out.append((r, ctype))
        return tuple(out)

    @property
    def binding_failed(self) -> tuple[tuple[AllocationResult, Condition], ...]:
        """(result, condition) for each binding failure condition that is True."""
        out = []
        for r in self.results:
            st = self.device_status(r) if r.binding_failure_conditions else None
            for ctype in r.binding_failure_conditions if st else ():
                c = st.condition(ctype)  # type: ignore[union-attr]
                if c is not None and c.status == "True":
                    out.append((r, c))
        return tuple(out)

    def device_status(self, result: AllocationResult) -> DeviceStatus | None:
        """The ``status.devices[]`` entry of one allocation result (same device and share)."""
        return next(
            (s for s in self.device_statuses if s.device_key == result.device_key and s.share_id == result.share_id),
            None,
        )


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


def _count_problem(obj: dict[str, Any]) -> str | None:
    """A request ``count`` no API server serves (not a whole number, not above zero, or wider
    than int64: ``-1``, ``"3"``, ``2.5``, ``1e30``), which read as the default would change
    what the claim asks for."""
    for i, req in enumerate(dicts(as_map(as_map(obj.get("spec")).get("devices")).get("requests"))):
        bodies = [req.get("exactly"), *as_list(req.get("firstAvailable"))] if "exactly" in req or "firstAvailable" in req else [req]
        for body in bodies:
            n = body.get("count") if isinstance(body, dict) else None
            if n is None or (type(n) is int and 0 < n <= INT64):
                continue
            shown = repr(n) if type(n) is not int else str(n)
            if len(shown) > 24:
                shown = f"{shown[:12]}... ({len(shown)} characters)"
            return f"spec.devices.requests[{i}] count {shown} is not a device count an API server accepts (a whole number, 1 to 2^63-1)"
    return None


def parse_resource_claim(obj: dict[str, Any]) -> ResourceClaim:
    """Parse a v1 ResourceClaim. Raises ``ValueError`` without a name or namespace, or when a
    field of its requests or allocation is of the wrong JSON type."""
    meta = as_map(obj.get("metadata"))
    if not isinstance(meta.get("name"), str) or not isinstance(meta.get("namespace"), str):
        raise ValueError("ResourceClaim without metadata.name or metadata.namespace")
    if (problem := shape_problem(obj, _CLAIM_SHAPES) or _count_problem(obj)) is not None:
        raise ValueError(f"ResourceClaim {meta['namespace']}/{meta['name']}: {problem}")
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
                    r.get("adminAccess") is True,
                    text(r.get("shareID")) or None,
                    strings(r.get("bindingConditions")),
                    strings(r.get("bindingFailureConditions")),
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
        device_statuses=tuple(_device_status(d) for d in dicts(status.get("devices"))),
        extended_resource_claim=str(annotations(obj).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION, "")).lower() == "true",
    )


def _device_status(d: dict[str, Any]) -> DeviceStatus:
    return make(DeviceStatus, (
        str(d.get("driver", "")),
        str(d.get("pool", "")),
        str(d.get("device", "")),
        text(d.get("shareID")) or None,
        conditions(d.get("conditions")),
        d.get("data"),
        dict(as_map(d.get("networkData"))),
    ))


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
    """A DeviceTaintRule (v1alpha3, v1beta2, v1 from Kubernetes 1.37): ``spec.deviceSelector``
    {driver, pool, device; v1alpha3 also deviceClassName and CEL selectors}, ``spec.taint``
    (None when absent) and ``status.conditions`` (e.g. ``EvictionInProgress``)."""

    NAMESPACED: ClassVar[bool] = False

    driver: str | None
    pool: str | None
    device: str | None
    selectors: tuple[str, ...]
    taint: Taint | None
    device_class: str | None = None
    conditions: tuple[Condition, ...] = ()

    @property
    def selector_empty(self) -> bool:
        return not (self.driver or self.pool or self.device or self.selectors or self.device_class)

    def selects(self, device: Device) -> bool | None:
        """Whether the rule's driver/pool/device fields select ``device`` (all set ones must
        match; none set selects every device). None when the rule also has CEL selectors or a
        DeviceClass (v1alpha3), which need the CEL evaluator to decide."""
        if self.driver and self.driver != device.driver:
            return False
        if self.pool and self.pool != device.pool:
            return False
        if self.device and self.device != device.name:
            return False
        if self.selectors or self.device_class:
            return None
        return True


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
        device_class=text(sel.get("deviceClassName")) or None,
        conditions=conditions(as_map(obj.get("status")).get("conditions")),
    )
