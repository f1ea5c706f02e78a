"""The overview's numbers kept per node and per pool, so a sync's change costs what it touches.

Pure: no Django. Two parts, both recomputed only where a change reaches:

- ``DraSummaries``: per node, what ``capacity.node_states`` says of it (``NodeSummary``:
  ``allocatable_now_by_profile``, free devices, MIG instances, possible placements no claim
  holds), with the index that tells which nodes a change reaches: a ResourceSlice reaches
  every node publishing in its pool (``spec.pool``: the generation and the ``sharedCounters``
  are the pool's), a ResourceClaim the nodes of the pools its
  ``status.allocation.devices.results[]`` name, before and after the change.
- ``PoolDevices``: per (driver, pool), the stored devices (the Device rows) counted as the
  overview shows them (by ``productName``, by MIG profile, other drivers), with "held" meaning
  some allocation result names the device; ``overview_counts`` sums them.

A DeviceTaintRule or DeviceClass change can reach any device: the caller builds anew then.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inventory import capacity
from inventory.kube import GPU_DRIVER
from inventory.records import Device, DeviceTaintRule, ResourceClaim, ResourceSlice

PoolKey = tuple[str, str]  # (driver, pool) as ResourceSlice spec and allocation results name it
ProfileKey = tuple[str, str]  # (productName, MIG profile); "" when the device publishes none


# --- per node: the DRA state --------------------------------------------------------------------


@dataclass(frozen=True)
class NodeSummary:
    """What the overview reads of one node's ``capacity.NodeState``: ``allocatable``
    (``allocatable_now_by_profile``), ``free`` (``free_count()``: gpu.nvidia.com devices that
    could be allocated now), ``instances`` (MIG instances that exist, ``instances()``) and
    ``unheld`` ((productName, profile) -> MIG devices of gpu.nvidia.com drawing on shared
    counters that no claim holds: possible placements under dynamic MIG, not instances)."""

    allocatable: dict[str, int]
    free: int
    instances: int
    unheld: dict[ProfileKey, int]


def summarize(state: capacity.NodeState) -> NodeSummary:
    """The ``NodeSummary`` of one node's DRA state."""
    unheld: dict[ProfileKey, int] = defaultdict(int)
    for s in state.devices.values():
        d = s.device
        if d.driver == GPU_DRIVER and d.type == "mig" and d.consumes_counters and not s.sharers:
            unheld[(d.product_name or "", d.profile or "")] += 1
    return NodeSummary(dict(state.allocatable_now_by_profile), state.free_count(), len(state.instances()), dict(unheld))


def _slice_order(s: ResourceSlice) -> tuple[str, str, int, str]:
    # One order for every computation, whatever order the records came in: a node's devices
    # are listed in it, and the greedy count of a large counter group breaks ties by it.
    return (s.driver, s.pool, s.pool_generation, s.name or "")


def _claim_order(c: ResourceClaim) -> tuple[str, str]:
    return (c.namespace or "", c.name or "")


def _slice_nodes(s: ResourceSlice) -> frozenset[str]:
    # The nodes whose state the slice's devices are part of (a device's nodeName, else the
    # slice's): the ones ``capacity.node_states`` lists them under.
    return frozenset(d.node_name for d in s.devices if d.node_name)


class DraSummaries:
    """node name -> ``NodeSummary`` of one cluster, and the index ``apply`` follows changes by.

    ``slices``: uid -> ResourceSlice; ``claims``: uid -> ResourceClaim, the claims whose
    allocation names some device (allocated or not: their results say which pools they
    reached). ``rules``: the cluster's DeviceTaintRules, ``cel_selects`` their CEL test
    (``capacity.device_taints``): fixed for the life of the summaries. ``recomputed``: the
    nodes the last ``build`` or ``apply`` computed (None: every node)."""

    def __init__(self, rules: Iterable[DeviceTaintRule] = (), cel_selects: Callable[[DeviceTaintRule, Device], bool] | None = None) -> None:
        self.rules = tuple(rules)
        self.cel_selects = cel_selects
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[str, ResourceClaim] = {}
        self.pool_slices: dict[PoolKey, set[str]] = defaultdict(set)
        self.pool_claims: dict[PoolKey, set[str]] = defaultdict(set)
        self.node_slices: dict[str, set[str]] = defaultdict(set)
        self.slice_nodes: dict[str, frozenset[str]] = {}
        self.nodes: dict[str, NodeSummary] = {}
        # Sums over the nodes, kept as they change (zeros left out).
        self.allocatable_total: dict[str, int] = {}
        self.unheld_total: dict[ProfileKey, int] = {}
        self.recomputed: frozenset[str] | None = None
        self._summary: dict[str, Any] | None = None

    @classmethod
    def build(
        cls, slices: Mapping[str, ResourceSlice], claims: Mapping[str, ResourceClaim],
        rules: Iterable[DeviceTaintRule] = (), cel_selects: Callable[[DeviceTaintRule, Device], bool] | None = None,
    ) -> DraSummaries:
        """Every node's summary from every slice and claim (uid -> record) of the cluster."""
        out = cls(rules, cel_selects)
        for uid, s in slices.items():
            out._add_slice(uid, s)
        for uid, c in claims.items():
            out._add_claim(uid, c)
        out._recompute(None)
        return out

    @classmethod
    def restore(
        cls, slices: Mapping[str, ResourceSlice], claims: Mapping[str, ResourceClaim], nodes: Mapping[str, NodeSummary],
        rules: Iterable[DeviceTaintRule] = (), cel_selects: Callable[[DeviceTaintRule, Device], bool] | None = None,
    ) -> DraSummaries:
        """The summaries ``build`` made of these slices and claims, from the node summaries it
        made then (kept elsewhere): only the index is built, no node is computed."""
        out = cls(rules, cel_selects)
        for uid, s in slices.items():
            out._add_slice(uid, s)
        for uid, c in claims.items():
            out._add_claim(uid, c)
        for name, summary in nodes.items():
            out._set_node(name, summary)
        out.recomputed = frozenset()
        return out

    def apply(
        self, slices: Mapping[str, ResourceSlice | None], claims: Mapping[str, ResourceClaim | None],
    ) -> tuple[set[PoolKey], set[str]]:
        """Follow one sync's changes: uid -> the record after it (None: deleted) of every
        ResourceSlice and ResourceClaim it created, updated or deleted. Recomputes the nodes
        publishing in a pool a changed slice is or was in, or a changed claim's results name
        or named. Returns (those pools, those nodes)."""
        pools: set[PoolKey] = set()
        for uid, new in slices.items():
            for s in (self.slices.get(uid), new):
                if s is not None:
                    pools.add((s.driver, s.pool))
        for uid, new_claim in claims.items():
            for c in (self.claims.get(uid), new_claim):
                if c is not None:
                    pools.update((r.driver, r.pool) for r in c.results)
        nodes = self._nodes_in(pools)  # before: a node that no longer publishes loses its summary
        for uid, new in slices.items():
            self._drop_slice(uid)
            if new is not None:
                self._add_slice(uid, new)
        for uid, new_claim in claims.items():
            self._drop_claim(uid)
            if new_claim is not None:
                self._add_claim(uid, new_claim)
        nodes |= self._nodes_in(pools)
        if nodes:
            self._recompute(nodes)
        else:
            self.recomputed = frozenset()
        return pools, nodes

    def summary(self) -> dict[str, Any]:
        """``{"allocatable": node -> allocatable_now_by_profile, "free": node -> free devices,
        "instances": node -> MIG instances, "unheld_placements": (productName, profile) ->
        possible placements no claim holds}``, nodes in name order (what
        ``queries.cluster_dra_summary`` returns). Made once per change."""
        if self._summary is None:
            names = sorted(self.nodes)
            self._summary = {
                "allocatable": {n: self.nodes[n].allocatable for n in names},
                "free": {n: self.nodes[n].free for n in names},
                "instances": {n: self.nodes[n].instances for n in names},
                "unheld_placements": dict(sorted(self.unheld_total.items())),
                "allocatable_total": dict(sorted(self.allocatable_total.items())),
            }
        return self._summary

    # -- the index -------------------------------------------------------------------------------
    def _add_slice(self, uid: str, s: ResourceSlice) -> None:
        self.slices[uid] = s
        self.pool_slices[(s.driver, s.pool)].add(uid)
        nodes = self.slice_nodes[uid] = _slice_nodes(s)
        for n in nodes:
            self.node_slices[n].add(uid)

    def _drop_slice(self, uid: str) -> None:
        s = self.slices.pop(uid, None)
        if s is None:
            return
        _discard(self.pool_slices, (s.driver, s.pool), uid)
        for n in self.slice_nodes.pop(uid, ()):
            _discard(self.node_slices, n, uid)

    def _add_claim(self, uid: str, c: ResourceClaim) -> None:
        if not c.results:
            return  # names no device: reaches no node
        self.claims[uid] = c
        for r in c.results:
            self.pool_claims[(r.driver, r.pool)].add(uid)

    def _drop_claim(self, uid: str) -> None:
        c = self.claims.pop(uid, None)
        if c is not None:
            for r in c.results:
                _discard(self.pool_claims, (r.driver, r.pool), uid)

    def _set_node(self, node: str, new: NodeSummary | None) -> None:
        old = self.nodes.pop(node, None)
        for summary, sign in ((old, -1), (new, 1)):
            if summary is None:
                continue
            for profile, n in summary.allocatable.items():
                _add(self.allocatable_total, profile, n * sign)
            for k, n in summary.unheld.items():
                _add(self.unheld_total, k, n * sign)
        if new is not None:
            self.nodes[node] = new

    def _nodes_in(self, pools: Iterable[PoolKey]) -> set[str]:
        out: set[str] = set()
        for p in pools:
            for uid in self.pool_slices.get(p, ()):
                out |= self.slice_nodes[uid]
        return out

    def _recompute(self, nodes: set[str] | None) -> None:
        """Summaries of ``nodes`` (None: all) from their pools' slices (every generation: the
        newest one publishes) and the allocated claims holding devices in those pools: what
        ``capacity.node_states`` reads of a node, so the same answer as over the cluster."""
        if nodes is None:
            self.nodes, self.allocatable_total, self.unheld_total = {}, {}, {}
            slices = list(self.slices.values())
            claim_uids: set[str] = set(self.claims)
        else:
            pools = {_pool_of(self.slices[uid]) for n in nodes for uid in self.node_slices.get(n, ())}
            slices = [self.slices[uid] for p in pools for uid in self.pool_slices.get(p, ())]
            claim_uids = set().union(*(self.pool_claims.get(p, set()) for p in pools))
        claims = sorted((c for uid in claim_uids if (c := self.claims[uid]).allocated), key=_claim_order)
        states = capacity.node_states(
            sorted(slices, key=_slice_order), claims, self.rules, (), nodes=nodes, cel_selects=self.cel_selects,
        )
        for n in states if nodes is None else nodes:
            self._set_node(n, summarize(states[n]) if n in states else None)
        self.recomputed = None if nodes is None else frozenset(nodes)
        self._summary = None


def _add(into: dict[Any, int], key: Any, n: int) -> None:
    v = into.get(key, 0) + n
    if v:
        into[key] = v
    else:
        into.pop(key, None)


def _pool_of(s: ResourceSlice) -> PoolKey:
    return (s.driver, s.pool)


def _discard(index: dict[Any, set[str]], key: Any, uid: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(uid)
        if not members:
            del index[key]


# --- per pool: the stored devices ---------------------------------------------------------------

# The Device columns ``pool_devices`` reads, in this order, then whether some allocation result
# names the device (``held``).
DEVICE_COLUMNS = ("driver", "pool", "type", "product_name", "profile", "uuid", "parent_uuid", "memory_bytes", "node_name")


@dataclass(frozen=True)
class PoolDevices:
    """One pool's stored devices as the overview counts them.

    gpu.nvidia.com: ``whole``: productName -> (whole GPUs, held ones); ``memory``:
    productName -> the largest whole GPU ``memory`` in bytes (products whose GPUs publish
    one); ``whole_uuids``: their ``uuid``s (a MIG device whose parentUUID is one is a
    placement on that GPU, not another GPU); ``mig``: (productName, profile) -> (MIG devices,
    held ones); ``mig_parents``: productName -> the MIG devices' parentUUIDs. Other drivers:
    ``other``: driver -> (devices, held ones, node names)."""

    whole: dict[str, tuple[int, int]]
    memory: dict[str, int]
    whole_uuids: frozenset[str]
    mig: dict[ProfileKey, tuple[int, int]]
    mig_parents: dict[str, frozenset[str]]
    other: dict[str, tuple[int, int, frozenset[str]]]


def pool_chunks(pools: Iterable[PoolKey], size: int = 400) -> Iterator[tuple[str, list[str]]]:
    """(driver, pool names) in chunks of ``size``, per driver: a query per chunk uses the
    (cluster, driver, pool, name) key's index (and SQLite's parameter cap: two lists of 400 fit)."""
    by_driver: dict[str, set[str]] = defaultdict(set)
    for driver, pool in pools:
        by_driver[driver].add(pool)
    for driver, names in sorted(by_driver.items()):
        ordered = sorted(names)
        for i in range(0, len(ordered), size):
            yield driver, ordered[i : i + size]


def pool_devices(rows: Iterable[tuple[Any, ...]]) -> dict[PoolKey, PoolDevices]:
    """(driver, pool) -> ``PoolDevices`` from device rows (``DEVICE_COLUMNS`` then held).
    ``type`` is the stored one: ``gpu``, ``mig`` or ``other``."""
    acc: dict[PoolKey, dict[str, Any]] = {}
    for driver, pool, typ, product, profile, uuid, parent, memory, node, held in rows:
        a = acc.get((driver, pool))
        if a is None:
            a = acc[(driver, pool)] = {"whole": {}, "memory": {}, "uuids": set(), "mig": {}, "parents": defaultdict(set), "other": {}}
        n_held = 1 if held else 0
        if driver != GPU_DRIVER:
            n, h, nodes = a["other"].get(driver, (0, 0, set()))
            nodes.add(node)
            a["other"][driver] = (n + 1, h + n_held, nodes)
        elif typ == "gpu":
            n, h = a["whole"].get(product, (0, 0))
            a["whole"][product] = (n + 1, h + n_held)
            if memory is not None and memory > a["memory"].get(product, memory - 1):
                a["memory"][product] = memory
            if uuid:
                a["uuids"].add(uuid)
        elif typ == "mig":
            n, h = a["mig"].get((product, profile), (0, 0))
            a["mig"][(product, profile)] = (n + 1, h + n_held)
            a["parents"][product].add(parent)
    return {
        k: PoolDevices(
            whole=a["whole"], memory=a["memory"], whole_uuids=frozenset(a["uuids"]), mig=a["mig"],
            mig_parents={p: frozenset(v) for p, v in a["parents"].items()},
            other={d: (n, h, frozenset(nodes)) for d, (n, h, nodes) in a["other"].items()},
        )
        for k, a in acc.items()
    }  # fmt: skip


class DeviceTotals:
    """The sums of one cluster's ``PoolDevices``, kept by adding and taking away pools (a
    sync's change costs its pools, not the cluster). What is distinct (uuids, parentUUIDs,
    node names, the largest memory) is counted per pool holding it, so taking a pool away
    leaves what the other pools hold."""

    def __init__(self, pools: Iterable[PoolDevices] = ()) -> None:
        self.whole: dict[str, list[int]] = {}
        self.memory: dict[str, dict[int, int]] = {}  # product -> a pool's largest memory -> pools
        self.uuids: dict[str, int] = {}
        self.mig: dict[ProfileKey, list[int]] = {}
        self.parents: dict[str, dict[str, int]] = {}
        self.other: dict[str, list[int]] = {}
        self.other_nodes: dict[str, dict[str, int]] = {}
        for p in pools:
            self.add(p)

    def add(self, p: PoolDevices, sign: int = 1) -> None:
        """Count one pool in (``sign`` 1) or out (-1: a pool counted in before)."""
        for product, (n, h) in p.whole.items():
            _bump(self.whole, product, n * sign, h * sign)
        for product, mem in p.memory.items():
            _count(self.memory.setdefault(product, {}), (mem,), sign)
        _count(self.uuids, p.whole_uuids, sign)
        for k, (n, h) in p.mig.items():
            _bump(self.mig, k, n * sign, h * sign)
        for product, parents in p.mig_parents.items():
            _count(self.parents.setdefault(product, {}), parents, sign)
        for driver, (n, h, nodes) in p.other.items():
            _bump(self.other, driver, n * sign, h * sign)
            _count(self.other_nodes.setdefault(driver, {}), nodes, sign)

    def replace(self, old: PoolDevices | None, new: PoolDevices | None) -> None:
        if old is not None:
            self.add(old, -1)
        if new is not None:
            self.add(new)


def _bump(into: dict[Any, list[int]], key: Any, n: int, h: int) -> None:
    t = into.setdefault(key, [0, 0])
    t[0] += n
    t[1] += h
    if t[0] <= 0:  # a product, profile or driver no pool has any more
        del into[key]


def _count(into: dict[Any, int], keys: Iterable[Any], sign: int) -> None:
    for k in keys:
        n = into.get(k, 0) + sign
        if n > 0:
            into[k] = n
        else:
            into.pop(k, None)


def dra_totals(summary: Mapping[str, Any]) -> dict[str, int]:
    """profile -> ``allocatable_now_by_profile`` summed over the nodes of one DRA summary."""
    out: dict[str, int] = defaultdict(int)
    for per_node in summary["allocatable"].values():
        for profile, n in per_node.items():
            out[profile] += n
    return dict(out)


def overview_counts(totals: Iterable[DeviceTotals], dra: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The overview's ``products``, ``profiles`` and ``other_drivers`` of the clusters whose
    device totals (a ``DeviceTotals`` each) and DRA summaries (``DraSummaries.summary()``
    each) are given.

    ``products`` (by productName, sorted): ``whole`` GPUs and ``whole_allocated``,
    ``memory_bytes`` (largest), ``mig_parents`` (distinct parentUUIDs that are no whole GPU's
    uuid in these clusters), ``mig_instances`` (MIG devices less the possible placements no
    claim holds), ``mig_allocated``, ``total`` (whole + parents). ``profiles`` (by
    productName, profile): ``total``, ``allocated``, ``free``: instances not held, or under
    dynamic MIG what can still be allocated (``allocatable_now_by_profile`` summed over the
    nodes), then ``placements`` (the unheld possible ones). ``other_drivers`` (by driver):
    ``devices``, ``allocated``, ``nodes`` (distinct (cluster, node name)s: ``totals`` are one
    cluster's each)."""
    parts = list(totals)
    whole: dict[str, list[int]] = {}
    memory: dict[str, int] = {}
    mig: dict[ProfileKey, list[int]] = {}
    other: dict[str, list[int]] = {}
    for t in parts:
        for product, (n, h) in t.whole.items():
            _bump(whole, product, n, h)
        for product, mems in t.memory.items():
            if mems:
                memory[product] = max(memory.get(product, 0), *mems)
        for k, (n, h) in t.mig.items():
            _bump(mig, k, n, h)
        for driver, (n, h) in t.other.items():
            _bump(other, driver, n, h)
    unheld: dict[ProfileKey, int] = defaultdict(int)
    allocatable: dict[str, int] = defaultdict(int)
    for s in dra:
        for k, n in s["unheld_placements"].items():
            unheld[k] += n
        for profile, n in (s["allocatable_total"] if "allocatable_total" in s else dra_totals(s)).items():
            allocatable[profile] += n
    unheld_by_product: dict[str, int] = defaultdict(int)
    for (product, _), n in unheld.items():
        unheld_by_product[product] += n
    by_product: dict[str, list[int]] = {}
    for (product, _), (n, h) in mig.items():
        _bump(by_product, product, n, h)
    products = []
    for product in sorted(set(whole) | set(by_product), key=lambda p: p or ""):
        w, m = whole.get(product, [0, 0]), by_product.get(product, [0, 0])
        parents = set().union(*(t.parents.get(product, {}).keys() for t in parts))
        n_parents = len(parents.difference(*(t.uuids.keys() for t in parts))) if parents else 0
        products.append({
            "product": product or "(unknown)",
            "whole": w[0], "whole_allocated": w[1], "memory_bytes": memory.get(product),
            "mig_parents": n_parents,
            "mig_instances": m[0] - unheld_by_product.get(product, 0),
            "mig_allocated": m[1],
            "total": w[0] + n_parents,
        })  # fmt: skip
    profiles = []
    for (product, profile), (n, h) in sorted(mig.items()):
        row: dict[str, Any] = {"product_name": product, "profile": profile, "total": n, "allocated": h}
        placements = unheld.get((product, profile), 0)
        if placements:
            row.update(total=n - placements, free=allocatable.get(profile, 0), placements=placements)
        else:
            row["free"] = n - h
        profiles.append(row)
    # Each part is one cluster: a node name is counted per cluster (gpu-node-1 of two
    # clusters is two machines).
    drivers = [
        {"driver": d, "devices": n, "allocated": h, "nodes": sum(len(t.other_nodes.get(d, {})) for t in parts)}
        for d, (n, h) in sorted(other.items())
    ]  # fmt: skip
    return {"products": products, "profiles": profiles, "other_drivers": drivers}
