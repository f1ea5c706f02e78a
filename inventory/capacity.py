"""What can still be allocated on a node, and each device's taints and health.

Pure: no Django; inputs are parse-layer records (``inventory.records``). Sources:

- Devices, their ``consumesCounters`` and ``allowMultipleAllocations``, ``capacity`` and
  ``taints``: ResourceSlice ``spec.devices[]``; counter sets: ResourceSlice
  ``spec.sharedCounters[]`` of the same driver and pool (NVIDIA's dynamic MIG publishes them
  in a slice of their own, one set per GPU, and every possible MIG placement as a device).
- What is taken: ResourceClaim ``status.allocation.devices.results[]``; a result with
  ``adminAccess`` takes nothing (monitoring access); a result on a device with
  ``allowMultipleAllocations`` takes its ``consumedCapacity``, not the device.
- Taints: the slice's ``devices[].taints`` plus each DeviceTaintRule whose
  ``spec.deviceSelector`` selects the device.
- Health: pod ``status.containerStatuses[].allocatedResourcesStatus``, claim
  ``status.devices[]`` (a ``Healthy`` condition or ``data.health``), and the NVIDIA driver's
  health taints (``gpu.nvidia.com/xid``, ``gpu.nvidia.com/gpu-lost``,
  ``gpu.nvidia.com/unmonitored``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from inventory.kube import DEVICECLASS_RESOURCE_PREFIX, GPU_DRIVER
from inventory.records import (
    AllocationResult,
    Device,
    DeviceStatus,
    DeviceTaintRule,
    Pod,
    ResourceClaim,
    ResourceSlice,
    Taint,
)

HEALTHY, UNHEALTHY, UNKNOWN = "Healthy", "Unhealthy", "Unknown"
_RANK = {HEALTHY: 0, UNKNOWN: 1, UNHEALTHY: 2}
# The NVIDIA driver's health taints (read from its source, see ../shared/docs/domain.md): an
# XID taint with effect None is informational; NoSchedule/NoExecute ones mark the GPU unusable.
NVIDIA_XID_TAINT = f"{GPU_DRIVER}/xid"
NVIDIA_GPU_LOST_TAINT = f"{GPU_DRIVER}/gpu-lost"
NVIDIA_UNMONITORED_TAINT = f"{GPU_DRIVER}/unmonitored"
WHOLE_GPU = "gpu"
# Placements of one profile compete within a connected group of counter sets (one GPU under
# dynamic MIG: at most 7 placements of a profile). Beyond this many candidates in one group
# the count is a greedy lower bound rather than an exhaustive maximum.
EXACT_LIMIT = 22

DeviceKey = tuple[str, str, str]


# --- taints -------------------------------------------------------------------------------------


def device_taints(
    device: Device, rules: Iterable[DeviceTaintRule], cel_selects: Callable[[DeviceTaintRule, Device], bool] | None = None,
) -> tuple[Taint, ...]:
    """The device's own ``taints`` followed by the ``spec.taint`` of each DeviceTaintRule that
    selects it. A rule with CEL selectors or a DeviceClass (v1alpha3) is decided by
    ``cel_selects`` when given, else left out (it cannot be decided without CEL)."""
    out = list(device.taints)
    for rule in rules:
        if rule.taint is None:
            continue
        hit = rule.selects(device)
        if hit is None and cel_selects is not None:
            hit = cel_selects(rule, device)
        if hit:
            out.append(rule.taint)
    return tuple(out)


def keeps_off(taints: Iterable[Taint], tolerations: Iterable = ()) -> list[Taint]:
    """The NoSchedule/NoExecute taints not tolerated by any of ``tolerations``."""
    tols = list(tolerations)
    return [t for t in taints if t.keeps_off and not any(tol.tolerates(t) for tol in tols)]


def tolerated_by(taint: Taint, result: AllocationResult) -> bool:
    """Does the allocation result (the tolerations the scheduler copied into it) tolerate it?"""
    return any(tol.tolerates(taint) for tol in result.tolerations)


# --- health -------------------------------------------------------------------------------------


def worst(values: Iterable[str | None]) -> str | None:
    """Unhealthy over Unknown over Healthy; None when nothing reports."""
    best: str | None = None
    for v in values:
        if v in _RANK and (best is None or _RANK[v] > _RANK[best]):
            best = v
    return best


def taint_health(taints: Iterable[Taint]) -> str | None:
    """Health the NVIDIA driver's taints state: ``gpu-lost`` or a NoSchedule/NoExecute ``xid``
    taint -> Unhealthy; ``unmonitored`` -> Unknown; an informational XID (effect ``None``) or
    no such taint -> None (nothing reported)."""
    out: list[str] = []
    for t in taints:
        if t.key == NVIDIA_GPU_LOST_TAINT or (t.key == NVIDIA_XID_TAINT and t.keeps_off):
            out.append(UNHEALTHY)
        elif t.key == NVIDIA_UNMONITORED_TAINT:
            out.append(UNKNOWN)
    return worst(out)


def status_health(status: DeviceStatus) -> str | None:
    """Health a claim's ``status.devices[]`` entry states: a ``Healthy`` condition (True ->
    Healthy, False -> Unhealthy, else Unknown) or ``data.health`` when it is one of the three
    values; None otherwise (a ``Ready`` condition says the device was prepared, not its health)."""
    c = status.condition(HEALTHY)
    if c is not None:
        return {"True": HEALTHY, "False": UNHEALTHY}.get(c.status or "", UNKNOWN)
    data = status.data
    if isinstance(data, dict) and data.get("health") in _RANK:
        return str(data["health"])
    return None


def pod_reports(pod: Pod, claims: Mapping[tuple[str, str], ResourceClaim]) -> dict[DeviceKey, str]:
    """device key -> worst health the pod's kubelet reports for it. ``claims``: (namespace,
    name) -> claim. An entry naming ``<driver>/<pool>/<device>`` is that device; one naming a
    CDI id is the claim's only device for that request (left out when there are several)."""
    out: dict[DeviceKey, list[str]] = defaultdict(list)
    for claim_name, request, h in pod.resource_health:
        claim = claims.get((pod.namespace or "", claim_name))
        if claim is None or h.health is None:
            continue
        candidates = [r.device_key for r in claim.results if request is None or r.main_request == request]
        key = h.device_key
        if key is None or key not in candidates:
            if len(candidates) != 1:
                continue
            key = candidates[0]
        out[key].append(h.health)
    return {k: w for k, v in out.items() if (w := worst(v)) is not None}


def device_health(taints: Iterable[Taint], reports: Iterable[str | None] = (), statuses: Iterable[DeviceStatus] = ()) -> str | None:
    """``Healthy``, ``Unhealthy``, ``Unknown`` or None (nothing reports) for one device: the
    worst of its NVIDIA health taints, the pods' kubelet reports and its claims' status."""
    return worst([taint_health(taints), *reports, *(status_health(s) for s in statuses)])


# --- allocation state ---------------------------------------------------------------------------


@dataclass
class Holding:
    """Who holds one device: the (claim, result) pairs, admin-access ones apart."""

    results: list[tuple[ResourceClaim, AllocationResult]] = field(default_factory=list)
    admin: list[tuple[ResourceClaim, AllocationResult]] = field(default_factory=list)

    @property
    def taken(self) -> bool:
        return bool(self.results)


def holdings(claims: Iterable[ResourceClaim]) -> dict[DeviceKey, Holding]:
    """device key -> its holders among the allocated claims (each share of a shared device
    is one entry; admin-access results are kept apart: they take nothing)."""
    out: dict[DeviceKey, Holding] = defaultdict(Holding)
    for c in claims:
        if not c.allocated:
            continue
        for r in c.results:
            (out[r.device_key].admin if r.admin_access else out[r.device_key].results).append((c, r))
    # The sharers of a device by claim namespace and name: the same order whichever way the
    # claims came (read order, the stored model's buckets, a database's unordered rows).
    for h in out.values():
        for pairs in (h.results, h.admin):
            if len(pairs) > 1:
                pairs.sort(key=_by_claim)
    return dict(out)


def _by_claim(pair: tuple[ResourceClaim, AllocationResult]) -> tuple[str, str]:
    return (pair[0].namespace or "", pair[0].name)


def capacity_left(device: Device, holding: Holding | None) -> dict[str, Decimal]:
    """What is left of each capacity of a shared device (``capacity`` minus the holders'
    ``consumedCapacity``), keyed by qualified capacity name; values floor at 0."""
    left: dict[str, Decimal] = {}
    for name in device.capacity:
        total = device.capacity_value(name)
        if total is None:
            continue
        used = sum((r.consumed(name) or Decimal(0) for _, r in holding.results), Decimal(0)) if holding else Decimal(0)
        left[name] = max(total - used, Decimal(0))
    return left


def has_room(device: Device, holding: Holding | None) -> bool:
    """Can the device take one more allocation? An unshared device: nobody holds it. A device
    with ``allowMultipleAllocations``: some capacity is left (or it publishes none)."""
    if holding is None or not holding.taken:
        return True
    if not device.allow_multiple_allocations:
        return False
    left = capacity_left(device, holding)
    return not left or any(v > 0 for v in left.values())


def profile_of(device: Device) -> str | None:
    """The key ``allocatable_now_by_profile`` counts a device under: its MIG ``profile`` for
    a ``mig`` device, ``gpu`` for a whole GPU (driver ``type`` attribute); None otherwise."""
    if device.type == "mig":
        return device.profile or None
    if device.type == "gpu":
        return WHOLE_GPU
    return None


# --- counters -----------------------------------------------------------------------------------


CounterKey = tuple[str, str, str]  # (driver, pool, counter set)


def newest_generations(slices: Iterable[tuple[str, str, int]]) -> dict[tuple[str, str], int]:
    """(driver, pool) -> the newest generation among ``slices`` ((driver, pool, generation) per
    slice): within a pool only the slices of that generation publish, as the scheduler reads them."""
    newest: dict[tuple[str, str], int] = {}
    for driver, pool, generation in slices:
        if generation > newest.get((driver, pool), generation - 1):
            newest[(driver, pool)] = generation
    return newest


@dataclass(frozen=True)
class PoolState:
    """One pool as the scheduler gathers it: ``published`` slices of the ``newest`` generation,
    against the ``expected`` count those slices declare (``resourceSliceCount``), and how many
    slices of older generations linger. The scheduler counts a pool whose newest generation
    has a different number of slices than it declares as incomplete: a request for ``All``
    devices then fails ("currently being updated") until the driver has published the rest."""

    newest: int
    published: int
    expected: int
    older: int = 0
    agreed: bool = True  # the newest generation's slices declare one count

    @property
    def incomplete(self) -> bool:
        return self.published != self.expected or not self.agreed


def pool_states(slices: Iterable[tuple[str, str, int, int]]) -> dict[tuple[str, str], PoolState]:
    """(driver, pool) -> ``PoolState``, from (driver, pool, generation, resourceSliceCount) per
    slice. Where the newest generation's slices disagree on their count, the largest is shown
    and the pool is incomplete whatever the number published (the scheduler reads whichever
    slice it meets first; a disagreement is itself a pool being rewritten)."""
    rows = list(slices)
    newest = newest_generations((d, p, g) for d, p, g, _ in rows)
    published: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, str], set[int]] = {}
    older: dict[tuple[str, str], int] = {}
    for driver, pool, generation, count in rows:
        key = (driver, pool)
        if generation == newest[key]:
            published[key] = published.get(key, 0) + 1
            counts.setdefault(key, set()).add(count)
        else:
            older[key] = older.get(key, 0) + 1
    return {k: PoolState(newest[k], published[k], max(counts[k]), older.get(k, 0), len(counts[k]) == 1) for k in newest}


def invalid_pools(slices: Iterable[tuple[str, str, int, Iterable[str]]]) -> dict[tuple[str, str], list[str]]:
    """(driver, pool) -> the device names its newest generation lists more than once, from
    (driver, pool, generation, device names) per slice. The scheduler refuses to allocate from
    such a pool, and a node that sees it gets no allocation while the search reaches it ("pool
    ... is invalid")."""
    rows = [(d, p, g, list(names)) for d, p, g, names in slices]
    newest = newest_generations((d, p, g) for d, p, g, _ in rows)
    seen: dict[tuple[str, str], set[str]] = {}
    twice: dict[tuple[str, str], list[str]] = {}
    for driver, pool, generation, names in rows:
        key = (driver, pool)
        if generation != newest[key]:
            continue
        have = seen.setdefault(key, set())
        for name in names:
            if name in have and name not in twice.get(key, ()):
                twice.setdefault(key, []).append(name)
            have.add(name)
    return twice


def newest_slices(slices: Iterable[ResourceSlice]) -> list[ResourceSlice]:
    """The slices of each pool's newest generation, in their order: the ones the scheduler
    reads (an older generation's devices and counters are not offered)."""
    sl = list(slices)
    newest = newest_generations((s.driver, s.pool, s.pool_generation) for s in sl)
    return [s for s in sl if s.pool_generation == newest[(s.driver, s.pool)]]


def counter_sets(slices: Iterable[ResourceSlice]) -> dict[CounterKey, dict[str, Decimal]]:
    """(driver, pool, counter set) -> counter -> amount, from every slice's ``sharedCounters``
    (only the newest generation of each pool counts, as for devices)."""
    out: dict[CounterKey, dict[str, Decimal]] = {}
    for s in newest_slices(slices):
        for cs in s.shared_counters:
            out[(s.driver, s.pool, cs.name)] = dict(cs.counters)
    return out


def _demand(device: Device) -> dict[tuple[CounterKey, str], Decimal]:
    out: dict[tuple[CounterKey, str], Decimal] = {}
    for cc in device.consumes_counters:
        for name, amount in cc.counters.items():
            k = ((device.driver, device.pool, cc.counter_set), name)
            out[k] = out.get(k, Decimal(0)) + amount
    return out


def remaining_counters(
    devices: Iterable[Device], sets: Mapping[CounterKey, Mapping[str, Decimal]], held: Mapping[DeviceKey, Holding],
) -> dict[tuple[CounterKey, str], Decimal]:
    """(counter set, counter) -> what is left once every held device's ``consumesCounters``
    is taken (a shared device takes its counters once, however many claims share it). A
    counter no set declares reads as 0 left."""
    left = {(k, name): v for k, counters in sets.items() for name, v in counters.items()}
    for d in devices:
        h = held.get(d.key)
        if h is None or not h.taken:
            continue
        for k, amount in _demand(d).items():
            left[k] = left.get(k, Decimal(0)) - amount
    return left


def _fits(demand: Mapping[tuple[CounterKey, str], Decimal], left: Mapping[tuple[CounterKey, str], Decimal]) -> bool:
    return all(left.get(k, Decimal(0)) >= v for k, v in demand.items())


def _max_together(cands: list[dict[tuple[CounterKey, str], Decimal]], left: dict[tuple[CounterKey, str], Decimal]) -> int:
    """Largest number of ``cands`` (counter demands) that fit in ``left`` at once: exhaustive
    with pruning up to ``EXACT_LIMIT`` candidates, greedy (smallest demand first) beyond."""
    cands = [c for c in cands if _fits(c, left)]
    if len(cands) > EXACT_LIMIT:
        n = 0
        for c in sorted(cands, key=lambda c: sum(c.values())):
            if _fits(c, left):
                for k, v in c.items():
                    left[k] -= v
                n += 1
        return n
    best = 0

    def search(i: int, n: int) -> None:
        nonlocal best
        if n + (len(cands) - i) <= best:
            return
        if i == len(cands):
            best = max(best, n)
            return
        c = cands[i]
        if _fits(c, left):
            for k, v in c.items():
                left[k] -= v
            search(i + 1, n + 1)
            for k, v in c.items():
                left[k] += v
        search(i + 1, n)

    search(0, 0)
    return best


def free_device_keys(
    devices: Iterable[Device], held: Mapping[DeviceKey, Holding], taints: Mapping[DeviceKey, tuple[Taint, ...]],
    left: Mapping[tuple[CounterKey, str], Decimal],
) -> set[DeviceKey]:
    """Devices that could be allocated now on their own: room left (``has_room``), no
    NoSchedule/NoExecute taint, and their counters still available (an allocated shared
    device already holds its counters)."""
    out = set()
    for d in devices:
        h = held.get(d.key)
        if not has_room(d, h) or keeps_off(taints.get(d.key, d.taints)):
            continue
        if (h is None or not h.taken) and not _fits(_demand(d), left):
            continue
        out.add(d.key)
    return out


def allocatable_now_by_profile(
    devices: Iterable[Device], slices: Iterable[ResourceSlice], claims: Iterable[ResourceClaim],
    taints: Mapping[DeviceKey, tuple[Taint, ...]] | None = None,
) -> dict[str, int]:
    """{MIG profile, or ``gpu`` for whole GPUs: the largest number of additional devices of
    that profile that could be allocated together now} for one node's ``devices``.

    ``slices``: those holding the devices' pools' ``sharedCounters`` (other slices are
    ignored); ``claims``: every claim that may hold one of the devices; ``taints``: device key
    -> its taints including DeviceTaintRules (``device_taints``), default the slice's own.
    A device counts when it has room (an unheld device, or a shared one with capacity left),
    no NoSchedule/NoExecute taint, and the counters it consumes are free; devices of one
    profile that draw on the same counters compete (under dynamic MIG, seven 1g placements
    fit a GPU, one ``+me`` placement, no whole GPU once a placement is taken). Profiles with
    nothing allocatable are listed with 0 when the node publishes them.
    """
    devs = list(devices)
    return _allocatable(devs, holdings(claims), counter_sets(slices), taints or {})


def _allocatable(
    devs: list[Device], held: Mapping[DeviceKey, Holding], sets: Mapping[CounterKey, Mapping[str, Decimal]],
    tmap: Mapping[DeviceKey, tuple[Taint, ...]], free: set[DeviceKey] | None = None,
) -> dict[str, int]:
    left = remaining_counters(devs, sets, held)
    if free is None:
        free = free_device_keys(devs, held, tmap, left)
    by_profile: dict[str, list[Device]] = defaultdict(list)
    out: dict[str, int] = {}
    for d in devs:
        p = profile_of(d)
        if p is None:
            continue
        out.setdefault(p, 0)
        if d.key in free:
            by_profile[p].append(d)
    for p, cands in by_profile.items():
        independent = 0
        demands: list[dict[tuple[CounterKey, str], Decimal]] = []
        for d in cands:
            h = held.get(d.key)
            dem = _demand(d) if h is None or not h.taken else {}
            if dem:
                demands.append(dem)
            else:
                independent += 1
        out[p] = independent + _grouped_max(demands, dict(left))
    return dict(sorted(out.items()))


def _grouped_max(demands: list[dict[tuple[CounterKey, str], Decimal]], left: dict[tuple[CounterKey, str], Decimal]) -> int:
    """``_max_together`` over groups of demands that share no counter set (one GPU each
    under dynamic MIG), so the exhaustive search stays per GPU."""
    groups: dict[frozenset[CounterKey], list[dict[tuple[CounterKey, str], Decimal]]] = {}
    parent: dict[CounterKey, CounterKey] = {}

    def find(x: CounterKey) -> CounterKey:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for dem in demands:
        ks = [k for k, _ in dem]
        for a in ks[1:]:
            parent[find(a)] = find(ks[0])
    members: dict[CounterKey, list[dict[tuple[CounterKey, str], Decimal]]] = defaultdict(list)
    for dem in demands:
        members[find(next(iter(dem))[0])].append(dem)
    for root, dems in members.items():
        groups[frozenset([root])] = dems
    return sum(_max_together(dems, left) for dems in groups.values())


# --- one node's DRA state -----------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceState:
    """One device as the node and device pages and ``inventory --format json`` show it.

    ``taints``: its own plus DeviceTaintRules'. ``health``: ``device_health`` (None: nothing
    reports). ``sharers``: every (claim, result) holding it (several for a shared device);
    ``admin``: admin-access holders (they take nothing). ``capacity_left``: for a device with
    ``allowMultipleAllocations``, what its holders' ``consumedCapacity`` leaves (qualified
    capacity name -> base units), else empty. ``allocatable``: it could be allocated now on
    its own (room, counters, no NoSchedule/NoExecute taint)."""

    device: Device
    taints: tuple[Taint, ...]
    health: str | None
    sharers: tuple[tuple[ResourceClaim, AllocationResult], ...]
    admin: tuple[tuple[ResourceClaim, AllocationResult], ...]
    capacity_left: dict[str, Decimal]
    allocatable: bool

    def untolerated(self, result: AllocationResult) -> list[Taint]:
        """The NoSchedule/NoExecute taints of this device that a holder's result does not
        tolerate (a NoExecute one evicts its pods)."""
        return keeps_off(self.taints, result.tolerations)


@dataclass(frozen=True)
class NodeState:
    """``allocatable_now_by_profile`` and each device's ``DeviceState`` of one node."""

    node: str
    allocatable_now_by_profile: dict[str, int]
    devices: dict[DeviceKey, DeviceState]
    by_gpu: dict[str, dict[str, int]] = field(default_factory=dict)

    def gpu_allocatable(self, uuid: str | None) -> dict[str, int] | None:
        """``allocatable_now_by_profile`` of one GPU (its uuid: the whole-GPU device's
        ``uuid``, its placements' ``parentUUID``) when its devices draw on shared counters."""
        return self.by_gpu.get(uuid or "")

    @property
    def counter_consumers(self) -> set[DeviceKey]:
        """Devices that draw on shared counters (dynamic MIG placements and their GPUs)."""
        return {k for k, s in self.devices.items() if s.device.consumes_counters}

    def free_count(self, driver: str = GPU_DRIVER) -> int:
        """Devices of ``driver`` that could be allocated now on their own, a possible
        placement (an unheld MIG device drawing on shared counters) not counted: under
        dynamic MIG a GPU is free when its whole-GPU device is."""
        return sum(
            1 for s in self.devices.values()
            if s.device.driver == driver and s.allocatable
            and not (s.device.type == "mig" and s.device.consumes_counters and not s.sharers)
        )  # fmt: skip

    def free_gpu_count(self) -> int:
        """GPUs published whole that could be allocated now whole: their whole-GPU device is
        allocatable (room, counters, no NoSchedule/NoExecute taint) and no device carved from
        them (a MIG instance, a placement) is held."""
        busy = {s.device.parent_uuid for s in self.devices.values() if s.sharers and s.device.parent_uuid}
        return sum(
            1 for s in self.devices.values()
            if s.device.driver == GPU_DRIVER and s.device.type == "gpu" and not s.device.parent_uuid
            and s.allocatable and not (s.device.uuid and s.device.uuid in busy)
        )  # fmt: skip

    def instances(self, driver: str = GPU_DRIVER) -> list[DeviceState]:
        """MIG devices that exist: every MIG device without counters (static MIG), and the
        held ones of those drawing on counters (an unheld placement is only a possibility)."""
        return [
            s for s in self.devices.values()
            if s.device.driver == driver and s.device.type == "mig" and (s.sharers or not s.device.consumes_counters)
        ]  # fmt: skip


def node_states(
    slices: Iterable[ResourceSlice], claims: Iterable[ResourceClaim], rules: Iterable[DeviceTaintRule] = (),
    pods: Iterable[Pod] = (), nodes: Iterable[str] | None = None,
    cel_selects: Callable[[DeviceTaintRule, Device], bool] | None = None,
) -> dict[str, NodeState]:
    """node name -> ``NodeState`` for every node the slices name (only ``nodes`` when given).

    ``slices``: the nodes' slices and those holding their pools' ``sharedCounters``;
    ``claims``: the claims that may hold their devices (others are ignored); ``rules``: the
    cluster's DeviceTaintRules; ``pods``: pods whose ``allocatedResourcesStatus`` reports on
    the devices. Within a pool only the newest generation's slices publish (as the scheduler
    reads them), and nothing of a pool that lists a device twice is allocatable (judged on the
    slices given: a pool's slices on other nodes are not seen). ``cel_selects``: decides rules
    with CEL selectors (``device_taints``)."""
    sl = newest_slices(slices)
    want = set(nodes) if nodes is not None else None
    by_node: dict[str, list[Device]] = defaultdict(list)
    for s in sl:
        for d in s.devices:
            if d.node_name and (want is None or d.node_name in want):
                by_node[d.node_name].append(d)
    claim_list = list(claims)
    claim_map = {(c.namespace, c.name): c for c in claim_list}
    rule_list = list(rules)
    held = holdings(claim_list)
    reports: dict[DeviceKey, list[str]] = defaultdict(list)
    for p in pods:
        for k, h in pod_reports(p, claim_map).items():
            reports[k].append(h)
    statuses: dict[DeviceKey, list[DeviceStatus]] = defaultdict(list)
    for c in claim_list:
        for st in c.device_statuses:
            statuses[st.device_key].append(st)
    by_pool: dict[tuple[str, str], dict[CounterKey, dict[str, Decimal]]] = defaultdict(dict)
    for k, counters in counter_sets(sl).items():
        by_pool[k[:2]][k] = counters
    # A pool listing a device twice: the scheduler allocates nothing from it ("pool ... is invalid").
    invalid = invalid_pools((s.driver, s.pool, s.pool_generation, [d.name for d in s.devices]) for s in sl)
    out: dict[str, NodeState] = {}
    for node, devs in sorted(by_node.items()):
        sets = {k: v for pool in {d.key[:2] for d in devs} for k, v in by_pool.get(pool, {}).items()}
        taints = {d.key: device_taints(d, rule_list, cel_selects) for d in devs}
        left = remaining_counters(devs, sets, held)
        free = free_device_keys(devs, held, taints, left)
        if invalid:
            free = {k for k in free if k[:2] not in invalid}
        states = {}
        for d in devs:
            h = held.get(d.key)
            states[d.key] = DeviceState(
                device=d,
                taints=taints[d.key],
                health=device_health(taints[d.key], reports.get(d.key, ()), statuses.get(d.key, ())),
                sharers=tuple(h.results) if h else (),
                admin=tuple(h.admin) if h else (),
                capacity_left=capacity_left(d, h) if d.allow_multiple_allocations else {},
                allocatable=d.key in free,
            )
        per_gpu: dict[str, list[Device]] = defaultdict(list)
        for d in devs:
            if d.consumes_counters and (gpu := d.uuid if d.type == "gpu" else d.parent_uuid):
                per_gpu[gpu].append(d)
        by_gpu = {g: _allocatable(ds, held, sets, taints, free) for g, ds in per_gpu.items()}
        out[node] = NodeState(node, _allocatable(devs, held, sets, taints, free), states, by_gpu)
    return out


# --- extended resources -------------------------------------------------------------------------

IMPLICIT_EXTENDED_PREFIX = DEVICECLASS_RESOURCE_PREFIX


def extended_resource_classes(pod: Pod, classes: Iterable[Any]) -> dict[str, str]:
    """Extended resources the pod's containers ask for (``resources.limits``/``requests``)
    that a DeviceClass serves, as resource name -> DeviceClass name: a class's
    ``spec.extendedResourceName`` (``nvidia.com/gpu``), or the implicit
    ``deviceclass.resource.kubernetes.io/<class>`` name of any class. The scheduler makes one
    ResourceClaim for them (``Pod.extended_resource_claim``); a name no class serves is left
    to a device plugin and not listed."""
    by_name: dict[str, str] = {}
    names = set()
    for dc in classes:
        names.add(dc.name)
        if dc.extended_resource_name:
            by_name.setdefault(dc.extended_resource_name, dc.name)
    out: dict[str, str] = {}
    for c in pod.pod_spec.all_containers():
        for res in c.resource_names:
            if res in by_name:
                out[res] = by_name[res]
            elif res.startswith(IMPLICIT_EXTENDED_PREFIX) and res[len(IMPLICIT_EXTENDED_PREFIX):] in names:
                out[res] = res[len(IMPLICIT_EXTENDED_PREFIX):]
    return out
