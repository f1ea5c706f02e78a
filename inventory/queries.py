"""Aggregates the inventory pages show, computed in the database.

Every function here issues a fixed number of queries whatever the fleet size; none loads
every device to render a summary.
"""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, Max, Min, OuterRef, Q, QuerySet, Sum

from . import capacity, mig, overview_store, summaries
from .kube import GPU_DRIVER
from .models import FREE, PLACEABLE, Cluster, Device, DeviceType, Node, ResourceSlice


def scoped(qs: QuerySet, cluster: Cluster | None) -> QuerySet:
    return qs.filter(cluster=cluster) if cluster else qs


def cluster_rows() -> list[dict[str, Any]]:
    """One row per cluster with node/GPU/MIG/allocated/free totals (2 queries). ``free``:
    ``Node.free`` summed (nothing on a NotReady or cordoned node); ``plugin_gpus``/``plugin_migs``:
    what the device plugin advertises (``nvidia.com/gpu``, ``nvidia.com/mig-*``)."""
    sums = {
        r["cluster"]: r
        for r in Node.objects.values("cluster").annotate(
            nodes=Count("pk"), gpus=Sum("gpu_count"), migs=Sum("mig_count"),
            allocated=Sum("allocated_count"), free=Sum(FREE), plugin_gpus=Sum("plugin_gpu_count"),
            plugin_migs=Sum("plugin_mig_count"),
            not_ready=Count("pk", filter=Q(ready=False) | Q(unschedulable=True)),
            unknown=Count("pk", filter=Q(from_slices=True)),  # no Node object read: status unknown
            # Snapshots carry no server version: the kubelet versions the nodes report stand in.
            kubelet_min=Min("kubelet_version", filter=~Q(kubelet_version="")),
            kubelet_max=Max("kubelet_version", filter=~Q(kubelet_version="")),
        )
    }  # fmt: skip
    rows = []
    for c in Cluster.objects.all():
        s = sums.get(c.pk, {})
        lo, hi = s.get("kubelet_min") or "", s.get("kubelet_max") or ""
        rows.append({
            "cluster": c, "kubelets": lo if lo == hi else f"{lo} to {hi}",
            **{k: s.get(k) or 0 for k in ("nodes", "gpus", "migs", "allocated", "free", "not_ready", "unknown", "plugin_gpus", "plugin_migs")},
        })  # fmt: skip
    return rows


def with_dra_counts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``cluster_rows`` with ``migs`` and ``free`` as the DRA state has them
    (``cluster_dra_summary``): MIG instances that exist (not possible placements) and
    devices that could be allocated now (no NoSchedule/NoExecute taint, counters free, a
    shared device with room counted, on a node that is Ready and not cordoned). Nodes the summary does not know keep their stored
    counts. One query per cluster besides the (cached) summaries."""
    out = []
    for r in rows:
        summary = cluster_dra_summary(r["cluster"])
        migs, free = r["migs"], r["free"]
        nodes = Node.objects.filter(cluster=r["cluster"]).annotate(placeable=ExpressionWrapper(PLACEABLE, BooleanField()))
        for name, stored_migs, stored_free, placeable in nodes.values_list("name", "mig_count", "free_count", "placeable"):
            if name in summary["free"]:
                migs += summary["instances"][name] - stored_migs
                if placeable:  # ``free`` counts nothing of the others: the scheduler places no pod there
                    free += summary["free"][name] - stored_free
        out.append({**r, "migs": migs, "free": free})
    return out


def device_aggregates(cluster: Cluster | None, clusters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``products``, ``profiles`` and ``other_drivers`` of ``cluster`` (all clusters: None)
    (``summaries.overview_counts``), cached until a sync of the clusters shown changes their
    data (``data_changed_at``). Made from each cluster's per-pool device counts and DRA
    summary, which a worker keeps current as it syncs (``warm_overview``); a process holding
    none reads every device once. ``clusters``: ``cluster_rows()`` if known."""
    from django.core.cache import cache

    rows = clusters if clusters is not None else cluster_rows()
    stamp = "|".join(f"{r['cluster'].pk}:{r['cluster'].data_changed_at}" for r in rows if cluster in (None, r["cluster"]))
    # The code's fingerprint too: counts another release made are not served after a deploy.
    key = "overview:" + hashlib.sha256(
        f"{cluster.pk if cluster else '*'}|{stamp}|{overview_store.fingerprint()}".encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        found = _overview_counts(cluster, rows)
        cache.set(key, found, 3600)
    return found


def _overview_counts(cluster: Cluster | None, rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    shown = [r["cluster"] for r in (rows if rows is not None else cluster_rows()) if cluster in (None, r["cluster"])]
    if cluster is not None and not shown:
        shown = [cluster]
    dra = [_placeable_only(c, cluster_dra_summary(c)) for c in shown]
    totals = [_device_totals(c)[1] for c in shown]
    with _held_lock:  # no sync changes the kept totals while they are read
        return summaries.overview_counts(totals, dra)


def _placeable_only(cluster: Cluster, summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with what NotReady and cordoned nodes could allocate taken out of its
    per-profile totals: the scheduler places no pod there (as ``with_dra_counts`` does for
    the free devices)."""
    off = set(Node.objects.filter(cluster=cluster).exclude(PLACEABLE).values_list("name", flat=True)) & set(summary["allocatable"])
    if not off:
        return summary
    total = dict(summary["allocatable_total"] if "allocatable_total" in summary else summaries.dra_totals(summary))
    for name in off:
        for profile, n in summary["allocatable"][name].items():
            total[profile] = total.get(profile, 0) - n
    return {**summary, "allocatable_total": total}


def gpus_by_product(cluster: Cluster | None) -> list[dict[str, Any]]:
    """Physical GPUs by productName: whole GPUs plus MIG-partitioned parents (by parentUUID),
    with allocated whole GPUs and MIG instances counted separately.

    A parentUUID that is also a whole GPU's uuid (NVIDIA's dynamic MIG publishes the GPU and
    every possible placement on it) is that GPU, not another one; possible placements that no
    claim holds are not MIG instances (``cluster_dra_summary``)."""
    return _overview_counts(cluster)["products"]


def mig_by_profile(cluster: Cluster | None) -> list[dict[str, Any]]:
    """MIG instances by (product, profile): total, allocated, free. Under dynamic MIG the
    possible placements are not instances: ``total`` counts the held ones, and ``free`` is
    what can still be allocated (``allocatable_now_by_profile`` summed over the nodes)."""
    return _overview_counts(cluster)["profiles"]


def other_drivers(cluster: Cluster | None) -> list[dict[str, Any]]:
    """Devices of drivers other than gpu.nvidia.com: per driver devices, allocated, nodes."""
    return _overview_counts(cluster)["other_drivers"]


# What this process keeps of the clusters, each entry for one state of its cluster (its
# ``data_changed_at``): cluster pk -> (that state, per-pool device counts and their sums),
# and, in a process that syncs the cluster, cluster pk -> (that state, its DRA summaries). A sync moves them on
# to its own state by what it changed (``warm_overview``); an entry of another state is
# never read. Under the lock: threads of one worker may sync different clusters at once.
_pools: dict[int, tuple[Any, dict[summaries.PoolKey, summaries.PoolDevices], summaries.DeviceTotals]] = {}
_dra: dict[int, tuple[Any, summaries.DraSummaries]] = {}
_held_lock = threading.RLock()
# The kinds whose changes move the DRA summaries node by node; a DeviceTaintRule or a
# DeviceClass (the CEL of a rule naming it) may reach any device: everything is recomputed.
_PER_NODE_KINDS = ("ResourceSlice", "ResourceClaim")
_RECOMPUTE_ALL_KINDS = ("DeviceTaintRule", "DeviceClass")


def forget_overview() -> None:
    """Drop what this process keeps of every cluster's overview (tests; a fresh start)."""
    with _held_lock:
        _pools.clear()
        _dra.clear()


def warm_overview(cluster: Cluster, read: Any = None) -> None:
    """After a sync of ``cluster`` that changed its data: move the kept DRA summaries and
    per-pool device counts on by what ``read`` (the sync's ``ReadResult``: its ``changes``
    and the model after it, ``read.model``) changed, then cache the overview aggregates the
    sync made stale (its own and the all-clusters one) and its DRA summary, so the first page
    view after a sync does not pay for them. Without ``read``, a change set with errors, a
    DeviceTaintRule or DeviceClass change, or nothing kept of the state before the sync:
    everything is recomputed."""
    from django.core.cache import cache

    follow_changes(cluster, read)
    rows = cluster_rows()
    device_aggregates(cluster, rows)
    device_aggregates(None, rows)
    key = _dra_key(cluster)
    if cache.get(key) is None:
        cache.set(key, cluster_dra_summary(cluster), 3600)


def follow_changes(cluster: Cluster, read: Any = None) -> str:
    """Bring what this process keeps of ``cluster`` to its stored state (see
    ``warm_overview``), and keep it in the database for the next process
    (``overview_store``). Returns how: ``"changes"`` (only the nodes and pools the change set
    reaches were recomputed, from what this process or the database kept of the state before
    the sync) or ``"all"``."""
    state = cluster.stored_data_changed_at()
    after = getattr(read, "model", None)
    model = getattr(after, "model", None)
    changes = getattr(read, "changes", None)
    basis = getattr(after, "basis", None)
    with _held_lock:  # taken out while they change: no other thread reads them half-changed
        held = _dra.pop(cluster.pk, None)
        pools = _pools.pop(cluster.pk, None)
    if (
        model is not None and changes is not None and not changes.touches(_RECOMPUTE_ALL_KINDS)
        and (changed := _changed_records(model, changes)) is not None
    ):  # fmt: skip
        if held is None or pools is None or held[0] != basis or pools[0] != basis:
            held, pools = _kept_before(cluster, after, model) or (held, pools)
        if held is not None and pools is not None and held[0] == basis == pools[0]:
            dra = held[1]
            touched, nodes = dra.apply(*changed)
            _, counts, totals = pools
            fresh = _pool_device_rows(cluster, touched)
            for k in touched:
                totals.replace(counts.pop(k, None), fresh.get(k))
            counts.update(fresh)
            with _held_lock:
                _dra[cluster.pk] = (state, dra)
                _pools[cluster.pk] = (state, counts, totals)
            overview_store.save(cluster.pk, state, dra.nodes, counts, previous_basis=basis,
                                nodes_changed=nodes, pools_changed=touched)
            return "changes"
    # Everything anew.
    if model is None:
        from .exports import load_model

        model = load_model(cluster)
    rules = list(model.records.get("DeviceTaintRule", {}).values())
    dra = summaries.DraSummaries.build(
        dict(model.records.get("ResourceSlice", {})), dict(model.records.get("ResourceClaim", {})),
        rules, rule_cel(cluster, rules),
    )
    counts = _pool_device_rows(cluster, None)
    with _held_lock:
        _dra[cluster.pk] = (state, dra)
        _pools[cluster.pk] = (state, counts, summaries.DeviceTotals(counts.values()))
    overview_store.save(cluster.pk, state, dra.nodes, counts)
    return "all"


def _kept_before(cluster: Cluster, after: Any, model: Any) -> tuple[tuple[Any, Any], tuple[Any, Any, Any]] | None:
    """The summaries and pool counts of the state before the sync, as the database keeps them
    (``overview_store``), indexed by the records before the sync (the model after it, with
    each changed object as it was: ``ModelAfterSync.before``); None when not kept or the
    records before are not known."""
    before = getattr(after, "before", None)
    basis = getattr(after, "basis", None)
    if before is None:
        return None
    kept = overview_store.load(cluster.pk, basis)
    if kept is None:
        return None
    nodes, counts = kept
    of = {kind: dict(model.records.get(kind, {})) for kind in _PER_NODE_KINDS}
    for (kind, uid), old in before.items():
        if kind in of:
            if old is None:
                of[kind].pop(uid, None)
            else:
                of[kind][uid] = old
    rules = list(model.records.get("DeviceTaintRule", {}).values())
    dra = summaries.DraSummaries.restore(of["ResourceSlice"], of["ResourceClaim"], nodes, rules, rule_cel(cluster, rules))
    return (basis, dra), (basis, counts, summaries.DeviceTotals(counts.values()))


def kept_dra_summaries(cluster: Cluster) -> summaries.DraSummaries | None:
    """The DRA summaries this process keeps of ``cluster``'s current state, else None."""
    state = cluster.stored_data_changed_at()
    with _held_lock:
        held = _dra.get(cluster.pk)
    return held[1] if held is not None and held[0] == state else None


def _changed_records(model: Any, changes: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """uid -> record after the sync (None: deleted) of the ResourceSlices and ResourceClaims
    it changed; None when a created or updated one is not in the model (not every change
    can then be followed)."""
    out = []
    for kind in _PER_NODE_KINDS:
        of_kind = model.records.get(kind, {})
        deleted = changes.deleted.get(kind, set())
        part: dict[str, Any] = {}
        for uid in changes.uids(kind):
            rec = of_kind.get(uid)
            if rec is None and uid not in deleted:
                return None
            part[uid] = rec
        out.append(part)
    return out[0], out[1]


def _device_totals(cluster: Cluster) -> tuple[dict[summaries.PoolKey, summaries.PoolDevices], summaries.DeviceTotals]:
    """The per-pool device counts of ``cluster``'s current state and their sums: kept by this
    process or in the database, else read (and kept until the cluster's data changes)."""
    with _held_lock:
        held = _pools.get(cluster.pk)
    if held is not None and held[0] == cluster.data_changed_at:
        return held[1], held[2]
    # What the cluster's last sync kept in the database, else every device read: a command that
    # syncs one cluster refreshes the all-clusters overview without reading the others' devices.
    kept = overview_store.load(cluster.pk, cluster.data_changed_at, nodes_too=False)
    counts = kept[1] if kept is not None else _pool_device_rows(cluster, None)
    totals = summaries.DeviceTotals(counts.values())
    with _held_lock:
        if cluster.pk not in _pools or _pools[cluster.pk][0] != cluster.data_changed_at:
            _pools[cluster.pk] = (cluster.data_changed_at, counts, totals)
    return counts, totals


def _pool_device_rows(cluster: Cluster, pools: Collection[summaries.PoolKey] | None) -> dict[summaries.PoolKey, summaries.PoolDevices]:
    """``summaries.pool_devices`` of ``cluster``'s stored devices in ``pools`` (all: None);
    held: some allocation result names the device (an indexed EXISTS). Per driver and chunk
    of pools, so the (cluster, driver, pool, name) key's index is used."""
    from .models import AllocationResult

    devs = Device.objects.filter(cluster=cluster).order_by().annotate(
        held=Exists(AllocationResult.objects.filter(device_id=OuterRef("pk"))))
    columns = (*summaries.DEVICE_COLUMNS, "held", "slice_id")
    if pools is None:
        stale = superseded_slices(ResourceSlice.objects.filter(cluster=cluster))
        return summaries.pool_devices(_published(devs.values_list(*columns).iterator(chunk_size=5000), stale))
    rows: list[tuple[Any, ...]] = []
    for driver, names in summaries.pool_chunks(pools):
        stale = superseded_slices(ResourceSlice.objects.filter(cluster=cluster, driver=driver, pool__in=names))
        rows.extend(_published(devs.filter(driver=driver, pool__in=names).values_list(*columns), stale))
    return summaries.pool_devices(rows)


def _published(rows: Iterable[tuple[Any, ...]], stale: set[int]) -> Iterator[tuple[Any, ...]]:
    """The rows (their last column the device's slice) of devices no superseded slice holds,
    without that column (filtered here: a list of stale slices in SQL could pass SQLite's cap)."""
    for r in rows:
        if r[-1] not in stale:
            yield r[:-1]


def superseded_among(cluster: Cluster, slices: Iterable[ResourceSlice]) -> set[int]:
    """pks of the slices a newer generation of their pool replaces, among ``slices``' pools
    (whose other slices may be on no node or another one: all are read). One query for a
    node's few pools, whatever their drivers; a namesake pool of another driver is judged on
    its own generations."""
    names = sorted({s.pool for s in slices})
    stale: set[int] = set()
    for i in range(0, len(names), 400):
        stale |= superseded_slices(ResourceSlice.objects.filter(cluster=cluster, pool__in=names[i : i + 400]))
    return stale


SliceRow = tuple[int, str, str, int, int, int]  # pk, driver, pool, generation, pool's slice count, device count


def slice_pools(slices: QuerySet) -> tuple[list[SliceRow], dict[tuple[str, str], capacity.PoolState], set[tuple[str, str]]]:
    """The rows of ``slices``, the states of their pools (``capacity.pool_states``) and the
    pools whose newest generation lists a device twice (invalid to the scheduler: it allocates
    nothing from them). Two queries (three when a device row is missing): the slices, the
    device rows stored under them, and those per slice."""
    rows = list(slices.order_by().values_list(
        "pk", "driver", "pool", "pool_generation", "resource_slice_count", "device_count"))
    states = capacity.pool_states(r[1:5] for r in rows)
    devices = Device.objects.filter(slice_id__in=slices.values("pk")).order_by()
    if devices.count() == sum(r[5] for r in rows):
        return rows, states, set()  # every listed device has its row: none is listed twice
    stored = dict(devices.values_list("slice_id").annotate(n=Count("pk")))
    return rows, states, _pools_listing_twice(rows, states, stored)


def _pools_listing_twice(rows: list[SliceRow], states: dict[tuple[str, str], capacity.PoolState],
                         stored: dict[int, int]) -> set[tuple[str, str]]:
    """The pools whose newest generation lists more devices than are stored under it: a device
    listed twice (the device rows keep one). ``stored``: slice pk -> its device rows."""
    listed: dict[tuple[str, str], int] = {}
    held: dict[tuple[str, str], int] = {}
    for pk, d, p, g, _, n in rows:
        if g == states[(d, p)].newest:
            listed[(d, p)] = listed.get((d, p), 0) + n
            held[(d, p)] = held.get((d, p), 0) + stored.get(pk, 0)
    return {k for k, n in listed.items() if n > held[k]}


def superseded_slices(slices: QuerySet) -> set[int]:
    """pks of the slices a newer generation of their pool replaces: their devices are not
    published (the scheduler's rule, ``capacity.newest_generations``), so not counted. Usually
    none; a driver restarting its kubelet plugin leaves some for a moment."""
    found = list(slices.order_by().values_list("pk", "driver", "pool", "pool_generation"))
    newest = capacity.newest_generations((d, p, g) for _, d, p, g in found)
    return {pk for pk, d, p, g in found if g != newest[(d, p)]}


def gpu_tree(devices: list[Device], placements: Collection[tuple[str, str, str]] = ()) -> tuple[list[dict[str, Any]], dict[str, list[Device]]]:
    """Arrange one node's devices: physical GPUs (whole, or MIG parents) with nested MIG
    instances and free-by-profile; other drivers' devices grouped by driver.

    A MIG-partitioned GPU is not published as a device of its own under static MIG; it is
    shown as a row built from its instances (parentUUID, productName). ``placements``: keys
    of the devices that draw on shared counters (dynamic MIG): an unheld MIG placement is a
    possibility, not an instance, so it is counted (``placements``) rather than listed, and
    such a GPU has no "room for" (``allocatable_now_by_profile`` says what still fits).
    """
    dynamic = set(placements)
    gpus: dict[str, dict[str, Any]] = {}
    others: dict[str, list[Device]] = defaultdict(list)

    def row() -> dict[str, Any]:
        return {"device": None, "migs": [], "placements": 0, "dynamic": False}

    for d in devices:
        if d.driver != GPU_DRIVER or d.type == DeviceType.OTHER:
            others[d.driver].append(d)
        elif d.type == DeviceType.GPU:
            g = gpus.setdefault(d.uuid or d.name, row())
            g["device"] = d
            g["dynamic"] = g["dynamic"] or (d.driver, d.pool, d.name) in dynamic
    for d in devices:
        if d.driver == GPU_DRIVER and d.type == DeviceType.MIG:
            g = gpus.setdefault(d.parent_uuid or f"?{d.name}", row())
            if (d.driver, d.pool, d.name) in dynamic:
                g["dynamic"] = True
                if not getattr(d, "holder", None):
                    g["placements"] += 1
                    continue
            g["migs"].append(d)
    rows = []
    for uuid, g in gpus.items():
        first = g["device"] or (g["migs"][0] if g["migs"] else None)
        if first is None:  # only unheld placements, their GPU not published
            first = next(d for d in devices if d.driver == GPU_DRIVER and d.type == DeviceType.MIG and (d.parent_uuid or f"?{d.name}") == uuid)
        model = mig.model_for(first.product_name)
        free = None
        if g["migs"] and model and not g["dynamic"]:
            used: set[int] = set()
            for m in g["migs"]:
                used |= mig.occupied_slices(m.name, m.capacity, m.profile, m.product_name)
            free = {k: v for k, v in mig.fit_more(model, used).items() if v}
        rows.append({
            "uuid": uuid if not uuid.startswith("?") else "",
            "device": g["device"], "migs": sorted(g["migs"], key=lambda m: m.name),
            "product_name": first.product_name, "driver_version": first.driver_version,
            "pci_bus_id": first.pci_bus_id, "architecture": first.architecture,
            "memory_bytes": g["device"].memory_bytes if g["device"] else None,
            "fit_more": free, "minor": _minor(first.name), "placements": g["placements"], "dynamic": g["dynamic"],
        })  # fmt: skip
    rows.sort(key=lambda r: (r["minor"], r["uuid"]))
    return rows, dict(sorted(others.items()))


def _minor(name: str) -> int:
    # NVIDIA names devices gpu-<minor>[-mig-...]; sort numerically, unknown last.
    parts = name.split("-")
    return int(parts[1]) if len(parts) > 1 and parts[0] == "gpu" and parts[1].isdigit() else 10**6


def free_by_profile(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per profile: unallocated existing instances and how many more could be created."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"free_instances": 0, "fit_more": 0})
    for r in rows:
        for m in r["migs"]:
            if not getattr(m, "holder", None):
                out[m.profile]["free_instances"] += 1
        for profile, n in (r["fit_more"] or {}).items():
            out[profile]["fit_more"] += n
    return dict(sorted(out.items()))


def attach_holders(cluster_id: int | None, devices: list[Device]) -> None:
    """Set ``device.holders`` to the claims whose allocation names it, each with its
    ``reservedFor`` pods (``pod`` None when no pod with that uid is stored in the device's
    cluster). ``cluster_id`` None: the devices may come from several clusters. 3 queries."""
    from .models import AllocationResult, Pod, Reservation

    ids = [d.pk for d in devices]
    results = list(
        AllocationResult.objects.filter(device_id__in=ids)
        .select_related("claim__cluster")
        .only("device_id", "request", "claim__namespace", "claim__name", "claim__state", "claim__cluster__name")
    )
    claim_ids = {r.claim_id for r in results}
    res_by_claim: dict[int, list[Reservation]] = defaultdict(list)
    for res in Reservation.objects.filter(claim_id__in=claim_ids):
        res_by_claim[res.claim_id].append(res)
    uids = {res.uid for rs in res_by_claim.values() for res in rs}
    cluster_ids = {cluster_id} if cluster_id is not None else {d.cluster_id for d in devices}
    pods = {
        (p.cluster_id, p.uid): p
        for p in Pod.objects.filter(cluster_id__in=cluster_ids, uid__in=uids).only("cluster_id", "uid", "namespace", "name")
    }
    by_dev: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_dev[r.device_id].append({
            "claim": r.claim, "request": r.request,
            "pods": [{"name": res.name, "uid": res.uid, "pod": pods.get((r.claim.cluster_id, res.uid))}
                     for res in res_by_claim[r.claim_id]],
        })  # fmt: skip
    for d in devices:
        d.holders = by_dev.get(d.pk, [])
        d.holder = d.holders[0] if d.holders else None


def _records_of(qs: QuerySet, marker: str | None = None) -> list[Any]:
    """Records of the stored objects of ``qs``, each raw text parsed once (objects the parse
    layer refuses are left out: they were stored, so an older shape); with ``marker``, only
    objects whose text holds it."""
    from django.db.models import TextField
    from django.db.models.functions import Cast

    from . import jsonlist, records

    out = []
    for text in qs.values_list(Cast("raw", output_field=TextField()), flat=True).iterator(chunk_size=200):
        if marker is not None and marker not in text:
            continue
        try:
            r = records.parse_json(text)
        except (ValueError, jsonlist.JSONError):
            continue
        if r is not None:
            out.append(r)
    return out


def dra_states(cluster: Cluster, nodes: Collection[str] | None = None, health: bool = True) -> dict[str, Any]:
    """node name -> ``inventory.capacity.NodeState`` (``allocatable_now_by_profile``, each
    device's taints, health, sharers and what is left) for ``nodes`` of ``cluster`` (all:
    None), from the stored objects' records: the nodes' ResourceSlices and the slices of the
    same pools (``sharedCounters``), the claims holding their devices, the DeviceTaintRules
    and the pods on the nodes (for every node: the cluster model, ``_cluster_dra_states``) (``allocatedResourcesStatus``; not read when no claim holds a
    device). Four queries. ``health`` False: pods are not read (device health then comes from
    taints and claims only), what the overview's counts need."""

    from . import capacity
    from .models import AllocationResult, KubeObject, Pod, ResourceClaim, ResourceSlice

    if nodes is None:
        return _cluster_dra_states(cluster, health)
    slices = ResourceSlice.objects.filter(cluster=cluster)
    claims = ResourceClaim.objects.filter(cluster=cluster).exclude(state="pending")
    pods = Pod.objects.filter(cluster=cluster)
    if nodes is not None:
        names = sorted(set(nodes))
        # The nodes' slices and every slice of a pool they publish in (a counters-only slice
        # may name no node); a same-named pool of another driver only adds unused counters.
        pools = ResourceSlice.objects.filter(cluster=cluster, node_name__in=names).values("pool")
        slices = slices.filter(Q(node_name__in=names) | Q(pool__in=pools))
        claims = claims.filter(pk__in=AllocationResult.objects.filter(cluster=cluster, device__node_name__in=names).values("claim_id"))
        pods = pods.filter(node_name__in=names)
    claim_records = _records_of(claims)
    rules = _records_of(KubeObject.objects.filter(cluster=cluster, kind="DeviceTaintRule"))
    return capacity.node_states(
        _records_of(slices), claim_records, rules,
        # Health reports are about held devices; only pods that carry one are parsed (the
        # test on the text, not in SQL: SQLite would scan every pod's text before the node's).
        _records_of(pods, marker='"allocatedResourcesStatus"') if claim_records and health else (),
        nodes=nodes, cel_selects=rule_cel(cluster, rules),
    )


def _cluster_dra_states(cluster: Cluster, health: bool) -> dict[str, Any]:
    """``dra_states`` of every node, from the cluster model: the one this process kept after
    syncing the cluster, else ``exports.load_model`` (the records the last sync stored, else
    every stored object parsed once)."""
    from . import capacity
    from .exports import load_model

    recs = _kept_records(cluster)
    if recs is None:
        model = load_model(cluster)
        recs = {k: list(model.of_kinds([k])) for k in _DRA_KINDS}
    claims = [c for c in recs["ResourceClaim"] if c.allocated]
    rules = recs["DeviceTaintRule"]
    pods = [p for p in recs["Pod"] if any(cs.allocated_resources_status for cs in p.container_states)] if health else []
    return capacity.node_states(recs["ResourceSlice"], claims, rules, pods, cel_selects=rule_cel(cluster, rules))


_DRA_KINDS = ("ResourceSlice", "ResourceClaim", "DeviceTaintRule", "Pod")


def _kept_records(cluster: Cluster) -> dict[str, list[Any]] | None:
    """The DRA records of the model this process kept after syncing ``cluster``
    (``inventory.sync.held_records``); None in a process that never synced."""
    import sys

    sync = sys.modules.get("inventory.sync")  # only a process that syncs holds models
    return None if sync is None else sync.held_records(cluster, _DRA_KINDS)


def rule_cel(cluster: Cluster, rules: list[Any]) -> Any:
    """For DeviceTaintRules with CEL selectors or a DeviceClass (v1alpha3): a test of one
    device against them (``inventory.cel``: every selector true, and the class's selectors
    when one is named; an unknown class selects nothing). None when no rule needs one."""
    if not any(r.selectors or r.device_class for r in rules):
        return None
    from . import cel
    from .models import DeviceClass

    classes = {n: list(sel or []) for n, sel in DeviceClass.objects.filter(cluster=cluster).values_list("name", "selectors")}

    def selects(rule: Any, device: Any) -> bool:
        try:
            if rule.device_class and (rule.device_class not in classes or not cel.device_matches(device, classes[rule.device_class])):
                return False
            return cel.device_matches(device, rule.selectors) if rule.selectors else True
        except cel.SelectorError:  # a selector that fails on this device does not select it
            return False

    return selects


def cluster_dra_summary(cluster: Cluster) -> dict[str, Any]:
    """``{"allocatable": node -> allocatable_now_by_profile, "free": node -> free GPUs
    (``NodeState.free_count``), "instances": node -> MIG instances that exist,
    "unheld_placements": (product, profile) -> possible placements no claim holds,
    "allocatable_total": profile -> allocatable summed over the nodes}`` of ``cluster``
    (``summaries.DraSummaries.summary``): the summaries this process keeps of its
    current state (a worker that synced it), else cached until a sync changes its data
    (``data_changed_at``), else made from the cluster model (``_kept_records``)."""
    from django.core.cache import cache

    with _held_lock:
        held = _dra.get(cluster.pk)
        if held is not None and held[0] == cluster.data_changed_at:
            return held[1].summary()
    key = _dra_key(cluster)
    found = cache.get(key)
    if found is None:
        recs = _kept_records(cluster)
        if recs is None:
            from .exports import load_model

            model = load_model(cluster)
            recs = {k: list(model.of_kinds([k])) for k in _DRA_KINDS}
        rules = recs["DeviceTaintRule"]
        found = summaries.DraSummaries.build(
            {str(i): s for i, s in enumerate(recs["ResourceSlice"])}, {str(i): c for i, c in enumerate(recs["ResourceClaim"])},
            rules, rule_cel(cluster, rules),
        ).summary()
        cache.set(key, found, 3600)
    return found


def _dra_key(cluster: Cluster) -> str:
    return "dra-summary:" + hashlib.sha256(
        f"{cluster.pk}|{cluster.data_changed_at}|{overview_store.fingerprint()}".encode()).hexdigest()


def dra_holders(state: Any) -> list[dict[str, Any]]:
    """The holders of one device (``capacity.DeviceState``) as the device page lists them:
    claim namespace/name, request (``req/sub`` as chosen), shareID, consumedCapacity, admin
    access, and the device's NoSchedule/NoExecute taints that holder does not tolerate."""
    if state is None:
        return []
    out = []
    for admin, pairs in ((False, state.sharers), (True, state.admin)):
        for claim, r in pairs:
            out.append({
                "namespace": claim.namespace, "name": claim.name, "request": r.request, "share_id": r.share_id,
                "consumed": dict(r.consumed_capacity), "admin_access": admin, "untolerated": state.untolerated(r),
                "tolerated": [t for t in state.taints if t.keeps_off and t not in state.untolerated(r)],
            })  # fmt: skip
    return out


def claim_dra(raw: Any) -> dict[str, Any] | None:
    """What the claim page shows of a stored claim's DRA state (its record): ``admin_access``,
    ``extended_resource_claim``, per result the binding conditions and their status on
    ``status.devices[]`` (``binding``: [{result, conditions: [(type, status)], failures:
    [(type, status)], waiting: bool, failed: bool}]), ``statuses`` (``status.devices[]``) and
    ``prioritized`` ([{request, alternatives, chosen, passed_over}]: for a ``firstAvailable``
    request the alternative the allocation chose, and those before it, which the scheduler
    tries first and found unsatisfiable then), ``capacity_requests`` ([{request, alternative,
    capacity}]: ``capacity.requests`` of each request body that names some). None when the
    raw is not a claim."""
    from . import records

    try:
        c = records.parse_object(raw)
    except ValueError:
        return None
    if not isinstance(c, records.ResourceClaim):
        return None
    pending = {(r.device_key, t) for r, t in c.binding_conditions_pending}
    failed = {(r.device_key, cond.type) for r, cond in c.binding_failed}
    binding = []
    for r in c.results:
        if not (r.binding_conditions or r.binding_failure_conditions):
            continue
        st = c.device_status(r)

        def status_of(t: str, st: Any = st) -> str:
            cond = st.condition(t) if st else None
            return cond.status if cond and cond.status else "not reported"

        binding.append({
            "result": r,
            "conditions": [(t, status_of(t)) for t in r.binding_conditions],
            "failures": [(t, status_of(t)) for t in r.binding_failure_conditions],
            "waiting": any((r.device_key, t) in pending for t in r.binding_conditions),
            "failed": any((r.device_key, t) in failed for t in r.binding_failure_conditions),
        })  # fmt: skip
    chosen = c.chosen_subrequests
    prioritized = []
    for req in c.requests:
        if req.first_available is None:
            continue
        names = [s.name for s in req.first_available]
        pick = chosen.get(req.name or "")
        prioritized.append({
            "request": req.name, "alternatives": names, "chosen": pick,
            "passed_over": names[: names.index(pick)] if pick in names else [],
        })  # fmt: skip
    capacity_requests = [
        {"request": req.name, "alternative": body.name, "capacity": dict(body.capacity)}
        for req in c.requests for body in req.bodies if body.capacity
    ]
    return {
        "admin_access": c.admin_access,
        "extended_resource_claim": c.extended_resource_claim,
        "capacity_requests": capacity_requests,
        "binding": binding,
        "statuses": list(c.device_statuses),
        "prioritized": prioritized,
    }
