"""The overview's per-node DRA summaries and per-pool device counts a worker keeps as it syncs
equal a full recomputation after every change of a sequence (claims allocated, deallocated and
deleted, a node's slices re-created under a new pool generation, a DeviceTaintRule added), and
each change recomputes only the nodes it reaches. The devices counted equal the database's own
GROUP BY over every Device row (what the overview computed before it kept counts).

Objects: the real 2-node H100 slices of an EKS cluster (gpu.nvidia.com and
compute-domain.nvidia.com pools named after their nodes), the dra-example-driver's real mock
GPU slice, two dynamic-MIG nodes as NVIDIA's driver publishes them (``tests/dra/shapes``) and
claims allocated the way the scheduler writes them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from django.db.models import Count, Exists, Max, OuterRef, Q

from inventory import queries, summaries
from inventory import sync as inventory_sync
from inventory.kube import GPU_DRIVER
from inventory.models import AllocationResult, Cluster, Device
from inventory.runs import after_read_hooks
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from tests.conftest import H100_SLICES
from tests.dra import shapes

pytestmark = pytest.mark.django_db
EXAMPLE = shapes.FIXTURES / "k8s" / "resourceslices" / "dra-example-driver-mock-gpus.v1.yaml"
RULE = shapes.DRA / "device-taints-tolerations__device-taint-pod-noschedule__3-device-taint-rule.yaml"
EXAMPLE_POOL = "dra-example-driver-cluster-worker"
MIG_A, MIG_B = "mig-node-a", "mig-node-b"


def _items(path: Path) -> list[dict]:
    doc = yaml.safe_load(path.read_text())
    return list(doc["items"]) if doc.get("kind") == "List" else [doc]


def claim(name: str, results: list[dict], node: str | None = None) -> dict:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}  # fmt: skip
    return shapes.allocate(body, results, node=node)


class Fleet:
    """The objects of one snapshot, by name, with a resourceVersion each (bumped on change)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict] = {}
        self.version = 0
        for o in [*_items(H100_SLICES), *_items(EXAMPLE), *shapes.dynamic_mig_node(MIG_A, gpus=2),
                  *shapes.dynamic_mig_node(MIG_B, gpus=2)]:  # fmt: skip
            self.put(o)
        self.put(claim("h100-a", [shapes.result("gpu", "gpu-0", "gpu-node-1")], "gpu-node-1"))
        self.put(claim("mig-a", [shapes.result("gpu", "gpu-0-mig-3g71gb-9-0", MIG_A)], MIG_A))
        self.put(claim("mig-b", [shapes.result("gpu", "gpu-1", MIG_B)], MIG_B))
        self.put(claim("example", [shapes.result("gpu", "gpu-1", EXAMPLE_POOL, driver="gpu.example.com")], EXAMPLE_POOL))

    def put(self, obj: dict) -> None:
        obj = copy.deepcopy(obj)
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        self.objects[(obj["kind"], obj["metadata"]["name"])] = obj

    def drop(self, kind: str, name: str) -> None:
        del self.objects[(kind, name)]

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(self.objects.values())}))
        return path


def sync(cluster: Cluster, fleet: Fleet, path: Path) -> None:
    run = sync_cluster(cluster, SnapshotSource(fleet.write(path)), after_read=after_read_hooks)
    assert run.status in ("ok", "partial"), run.error
    cluster.refresh_from_db()


def database_counts(cluster: Cluster) -> dict:
    """products / profiles / other drivers as GROUP BYs over every Device row (the overview's
    queries before it kept counts), possible placements taken from the DRA summary."""
    held = Exists(AllocationResult.objects.filter(device_id=OuterRef("pk")))
    gpus = Device.objects.filter(cluster=cluster, driver=GPU_DRIVER).annotate(held=held)
    whole = {r["product_name"]: r for r in gpus.filter(type="gpu").values("product_name").annotate(
        n=Count("pk"), allocated=Count("pk", filter=Q(held=True)), memory=Max("memory_bytes"))}  # fmt: skip
    uuids = Device.objects.filter(cluster=cluster, driver=GPU_DRIVER, type="gpu").exclude(uuid="").values("uuid")
    parents = {r["product_name"]: r["n"] for r in gpus.filter(type="mig").exclude(parent_uuid__in=uuids)
               .values("product_name").annotate(n=Count("parent_uuid", distinct=True))}  # fmt: skip
    migs = list(gpus.filter(type="mig").values("product_name", "profile").annotate(
        total=Count("pk"), allocated=Count("pk", filter=Q(held=True))).order_by("product_name", "profile"))  # fmt: skip
    others = list(Device.objects.filter(cluster=cluster).exclude(driver=GPU_DRIVER).values("driver").annotate(
        devices=Count("pk", distinct=True), allocated=Count("pk", filter=Q(allocations__isnull=False), distinct=True),
        nodes=Count("node_name", distinct=True)).order_by("driver"))  # fmt: skip
    dra = queries.dra_states(cluster, health=False)
    unheld: dict[tuple[str, str], int] = {}
    allocatable: dict[str, int] = {}
    for st in dra.values():
        for s in st.devices.values():
            d = s.device
            if d.driver == GPU_DRIVER and d.type == "mig" and d.consumes_counters and not s.sharers:
                unheld[(d.product_name or "", d.profile or "")] = unheld.get((d.product_name or "", d.profile or ""), 0) + 1
        for p, n in st.allocatable_now_by_profile.items():
            allocatable[p] = allocatable.get(p, 0) + n
    products = []
    for product in sorted(set(whole) | {m["product_name"] for m in migs}):
        w = whole.get(product, {})
        mine = [m for m in migs if m["product_name"] == product]
        products.append({
            "product": product or "(unknown)", "whole": w.get("n", 0), "whole_allocated": w.get("allocated", 0),
            "memory_bytes": w.get("memory"), "mig_parents": parents.get(product, 0),
            "mig_instances": sum(m["total"] for m in mine) - sum(n for (p, _), n in unheld.items() if p == product),
            "mig_allocated": sum(m["allocated"] for m in mine), "total": w.get("n", 0) + parents.get(product, 0),
        })  # fmt: skip
    profiles = []
    for m in migs:
        u = unheld.get((m["product_name"], m["profile"]), 0)
        profiles.append({**m, "total": m["total"] - u, "free": allocatable.get(m["profile"], 0), "placements": u}
                        if u else {**m, "free": m["total"] - m["allocated"]})  # fmt: skip
    return {"products": products, "profiles": profiles, "other_drivers": others}


def check_against_full_recomputation(cluster: Cluster) -> summaries.DraSummaries:
    """The kept summaries and counts equal ones made afresh from the stored state and the
    states ``capacity.node_states`` gives over the whole cluster; returns the kept ones."""
    kept = queries.kept_dra_summaries(cluster)
    assert kept is not None
    kept_counts = queries._overview_counts(cluster)
    states = queries.dra_states(cluster, health=False)
    assert {n: (s.allocatable_now_by_profile, s.free_count(), len(s.instances())) for n, s in states.items()} == {
        n: (s.allocatable, s.free, s.instances) for n, s in kept.nodes.items()}  # fmt: skip
    summary = kept.summary()
    queries.forget_overview()
    assert queries.follow_changes(cluster) == "all"  # no change set: everything anew
    fresh = queries.kept_dra_summaries(cluster)
    assert fresh is not None and fresh is not kept
    assert fresh.nodes == kept.nodes
    assert fresh.summary() == summary
    assert queries._overview_counts(cluster) == kept_counts == database_counts(cluster)
    return kept


@pytest.mark.parametrize("process", ["worker", "fresh"])
def test_kept_overview_summaries_follow_each_change_as_a_full_recomputation(tmp_path, process):
    """``worker``: the process keeps the summaries through its syncs. ``fresh``: every sync is
    a new process (a command) holding nothing: it follows the change from what the database
    keeps (``overview_store``) and recomputes the same nodes."""
    queries.forget_overview()
    fleet = Fleet()
    cluster = Cluster.objects.create(name="kept")
    path = tmp_path / "snapshot.json"
    sync(cluster, fleet, path)
    first = queries.kept_dra_summaries(cluster)
    assert first is not None and first.recomputed is None  # the first sync computes every node
    check_against_full_recomputation(cluster)

    def step(change, reached: set[str]) -> None:
        change()
        if process == "fresh":
            queries.forget_overview()
            inventory_sync.forget_models()
        sync(cluster, fleet, path)
        kept = queries.kept_dra_summaries(cluster)
        assert kept is not None and kept.recomputed == reached
        check_against_full_recomputation(cluster)  # keeps the fresh ones: the next step follows them

    # A claim allocated on a whole H100: that node alone.
    step(lambda: fleet.put(claim("h100-b", [shapes.result("gpu", "gpu-3", "gpu-node-2")], "gpu-node-2")), {"gpu-node-2"})
    # A dynamic-MIG claim deallocated (its placement's counters free again).
    def deallocate() -> None:
        c = copy.deepcopy(fleet.objects[("ResourceClaim", "mig-a")])
        del c["status"]
        fleet.put(c)

    step(deallocate, {MIG_A})
    # A claim deleted.
    step(lambda: fleet.drop("ResourceClaim", "mig-b"), {MIG_B})
    # The driver re-creates a node's slices: new names and uids, the next pool generation, one
    # GPU fewer; a claim allocated on the new slices in the same sync.
    def recreate() -> None:
        for key in [k for k in fleet.objects if k[0] == "ResourceSlice" and k[1].startswith(MIG_B)]:
            fleet.drop(*key)
        for s in shapes.dynamic_mig_node(MIG_B, gpus=1):
            s["metadata"]["name"] += "-v2"
            s["metadata"]["uid"] += "-v2"
            s["spec"]["pool"]["generation"] = 2
            fleet.put(s)
        fleet.put(claim("mig-b2", [shapes.result("gpu", "gpu-0-mig-1g18gb-19-3", MIG_B)], MIG_B))

    step(recreate, {MIG_B})
    # A DeviceTaintRule (real shape, selecting one dynamic-MIG GPU) may reach any device:
    # everything is recomputed.
    rule = _items(RULE)[0]
    rule["metadata"]["uid"] = "uid-rule"
    rule["spec"]["deviceSelector"] = {"driver": GPU_DRIVER, "pool": MIG_A, "device": "gpu-1"}
    rule["spec"]["taint"]["key"] = "example.com/maintenance"
    before = queries.kept_dra_summaries(cluster).nodes[MIG_A].allocatable["gpu"]
    fleet.put(rule)
    sync(cluster, fleet, path)
    kept = queries.kept_dra_summaries(cluster)
    assert kept is not None and kept.recomputed is None
    assert kept.nodes[MIG_A].allocatable["gpu"] == before - 1  # GPU 1 of node A kept off
    check_against_full_recomputation(cluster)
    # Then claims again, one node at a time: the other driver's pool is followed too.
    step(lambda: fleet.drop("ResourceClaim", "example"), {EXAMPLE_POOL})
    step(lambda: fleet.put(claim("mig-a", [shapes.result("gpu", "gpu-1-mig-1g18gb-19-0", MIG_A)], MIG_A)), {MIG_A})


def test_device_totals_take_a_pool_away_as_they_added_it():
    rows = [
        ("gpu.nvidia.com", "p1", "gpu", "H100", "", "GPU-1", "", 80 * 2**30, "n1", True),
        ("gpu.nvidia.com", "p1", "mig", "H100", "1g.10gb", "", "GPU-1", 10 * 2**30, "n1", False),
        ("gpu.nvidia.com", "p2", "gpu", "H100", "", "GPU-2", "", 94 * 2**30, "n2", False),
        ("gpu.nvidia.com", "p2", "mig", "H100", "1g.10gb", "", "GPU-9", 10 * 2**30, "n2", True),
        ("compute-domain.nvidia.com", "p2", "other", "", "", "", "", None, "n2", False),
        ("compute-domain.nvidia.com", "p3", "other", "", "", "", "", None, "n2", True),
    ]
    pools = summaries.pool_devices(rows)
    totals = summaries.DeviceTotals(pools.values())
    totals.replace(pools[("gpu.nvidia.com", "p2")], None)
    without = summaries.DeviceTotals(p for k, p in pools.items() if k != ("gpu.nvidia.com", "p2"))
    assert summaries.overview_counts([totals], []) == summaries.overview_counts([without], [])
    [h100] = summaries.overview_counts([totals], [])["products"]
    assert (h100["whole"], h100["memory_bytes"], h100["mig_parents"]) == (1, 80 * 2**30, 0)  # GPU-1 is a whole GPU
    totals.replace(None, pools[("gpu.nvidia.com", "p2")])
    [h100] = summaries.overview_counts([totals], [])["products"]
    assert (h100["whole"], h100["memory_bytes"], h100["mig_parents"], h100["total"]) == (2, 94 * 2**30, 1, 3)
    [cd] = summaries.overview_counts([totals], [])["other_drivers"]
    assert (cd["devices"], cd["allocated"], cd["nodes"]) == (2, 1, 1)
