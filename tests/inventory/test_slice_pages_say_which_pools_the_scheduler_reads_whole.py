"""A pool as the scheduler gathers it: only its newest generation counts, and a pool whose
newest generation has fewer (or more) slices than they declare (``resourceSliceCount``) is
incomplete, so a request for All devices fails until the driver has published the rest. The
slice pages say so, on real slices made incomplete or superseded as a driver mid-rewrite
leaves them."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from inventory.capacity import PoolState, invalid_pools, pool_states
from tests.conftest import H100_SLICES, write_list


def test_pool_states_follow_the_newest_generation_only():
    states = pool_states([
        ("gpu.nvidia.com", "n1", 3, 2), ("gpu.nvidia.com", "n1", 3, 2),  # complete at generation 3
        ("gpu.nvidia.com", "n1", 2, 1),  # a leftover of generation 2
        ("gpu.nvidia.com", "n2", 1, 3), ("gpu.nvidia.com", "n2", 1, 3),  # 2 of 3
        ("other.example.com", "n2", 5, 1),  # the same pool name of another driver is another pool
    ])
    assert states[("gpu.nvidia.com", "n1")] == PoolState(newest=3, published=2, expected=2, older=1)
    assert not states[("gpu.nvidia.com", "n1")].incomplete
    assert states[("gpu.nvidia.com", "n2")] == PoolState(newest=1, published=2, expected=3)
    assert states[("gpu.nvidia.com", "n2")].incomplete
    assert not states[("other.example.com", "n2")].incomplete
    # More slices than declared is not a whole pool either (the scheduler compares for equality).
    assert pool_states([("d", "p", 1, 1), ("d", "p", 1, 1)])[("d", "p")].incomplete
    # Slices of one generation declaring different counts: a pool being rewritten, whichever count
    # the scheduler meets first.
    mixed = pool_states([("d", "p", 1, 2), ("d", "p", 1, 3)])[("d", "p")]
    assert mixed.incomplete and not mixed.agreed and mixed.expected == 3


def test_invalid_pools_are_those_whose_newest_generation_lists_a_device_twice():
    assert invalid_pools([("d", "p", 2, ["a", "b"]), ("d", "p", 2, ["b", "c", "a"]), ("d", "p", 1, ["c", "c"]),
                          ("d", "q", 1, ["a"]), ("e", "p", 2, ["a"])]) == {("d", "p"): ["b", "a"]}
    assert invalid_pools([("d", "p", 1, ["a", "a"]), ("d", "p", 2, ["a"])]) == {}  # only an older generation


@pytest.fixture
def mid_rewrite(tmp_path, sync_snapshot):
    """The real H100 slices with one GPU pool declaring a second slice it has not published,
    and an old-generation copy of another pool's slice still listed."""
    from inventory.models import SyncStatus
    from inventory.snapshot import load_path

    objs = load_path(H100_SLICES).objects
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    gpu = [o for o in slices if o["spec"]["driver"] == "gpu.nvidia.com"]
    assert len({o["spec"]["pool"]["name"] for o in slices}) >= 2
    waiting = gpu[0]
    waiting["spec"]["pool"]["resourceSliceCount"] = 2
    current = next(o for o in slices if o["spec"]["pool"]["name"] != waiting["spec"]["pool"]["name"])
    old = copy.deepcopy(current)
    old["metadata"]["name"] += "-old"
    old["metadata"]["uid"] = old["metadata"]["uid"][:-3] + "old"
    old["spec"]["pool"]["generation"] -= 1
    run = sync_snapshot(write_list(tmp_path / "mid.json", [*objs, old]), "midpool")
    assert run.status == SyncStatus.OK, run.errors
    return waiting, current, old


def test_the_slice_list_marks_and_filters_what_the_scheduler_does_not_read_whole(client_in, mid_rewrite, django_assert_max_num_queries):
    from inventory.models import ResourceSlice

    waiting, current, old = mid_rewrite
    url = reverse("inventory:resourceslices", args=["midpool"])
    with django_assert_max_num_queries(12):
        resp = client_in.get(url)
    body = resp.content.decode()
    assert "1 incomplete pool" in body and "1 slice of an older generation" in body
    rows = {s.name: s for s in resp.context["slices"]}
    assert rows[waiting["metadata"]["name"]].pool_state.incomplete
    assert rows[old["metadata"]["name"]].pool_state.newest == current["spec"]["pool"]["generation"]

    resp = client_in.get(url, {"problems": "1"})
    assert {s.name for s in resp.context["slices"]} == {waiting["metadata"]["name"], old["metadata"]["name"]}
    assert resp.context["page"].paginator.count == 2 < ResourceSlice.objects.filter(cluster__name="midpool").count()


def test_a_slice_page_says_whether_its_pool_is_read_whole(client_in, mid_rewrite):
    waiting, current, old = mid_rewrite

    def page(o):
        return client_in.get(reverse("inventory:resourceslice", args=["midpool", o["metadata"]["name"]]))

    body = page(waiting).content.decode()
    assert "incomplete pool" in body and "1 of the 2 slices of generation" in body
    body = page(old).content.decode()
    assert "older generation" in body and "offers none of this slice" in body
    assert "shown under the slices of generation" in body and "lists no devices" not in body
    resp = page(current)
    assert 'badge green">complete' in resp.content.decode() and not resp.context["superseded"]
    assert not resp.context["pool_state"].incomplete
    # The pool's other slice is linked from each.
    assert reverse("inventory:resourceslice", args=["midpool", old["metadata"]["name"]]) in resp.content.decode()


def test_a_slice_page_says_when_its_pool_lists_a_device_twice(tmp_path, sync_snapshot, client_in):
    """A second slice of the same pool and generation lists one of the real slice's GPUs
    again: the run says so (a conflict of that pool), and the slice page names the device and
    what the scheduler does with such a pool."""
    from inventory.models import SyncStatus
    from inventory.snapshot import load_path

    objs = load_path(H100_SLICES).objects
    gpu = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    twin = copy.deepcopy(gpu)
    twin["metadata"]["name"] += "-b"
    twin["metadata"]["uid"] = twin["metadata"]["uid"][:-1] + "b"
    twin["spec"]["devices"] = twin["spec"]["devices"][:1]
    gpu["spec"]["pool"]["resourceSliceCount"] = twin["spec"]["pool"]["resourceSliceCount"] = 2
    run = sync_snapshot(write_list(tmp_path / "twice.json", [*objs, twin]), "twice")
    assert run.status == SyncStatus.PARTIAL and any("published twice" in e or "also published" in e for e in run.errors)
    name = twin["spec"]["devices"][0]["name"]
    for o in (gpu, twin):
        resp = client_in.get(reverse("inventory:resourceslice", args=["twice", o["metadata"]["name"]]))
        assert resp.context["listed_twice"] == [name]
        assert "invalid pool" in resp.content.decode() and 'badge green">complete' not in resp.content.decode()
    other = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["pool"]["name"] != gpu["spec"]["pool"]["name"])
    assert client_in.get(reverse("inventory:resourceslice", args=["twice", other["metadata"]["name"]])).context["listed_twice"] == []
    # Nothing of that pool is free to a pod being scheduled; the other GPU pool's devices are.
    from inventory import queries
    from inventory.models import Cluster

    summary = queries.cluster_dra_summary(Cluster.objects.get(name="twice"))
    assert summary["free"].get(gpu["spec"]["nodeName"], 0) == 0
    other_gpu = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com" and o is not gpu)
    assert summary["free"][other_gpu["spec"]["nodeName"]] == len(other_gpu["spec"]["devices"])
    # So do the node list's stored Free column and its "Free whole GPUs" filter.
    from inventory.filters import NodeFilter
    from inventory.models import Node

    nodes = {n.name: n for n in Node.objects.filter(cluster__name="twice")}
    assert nodes[gpu["spec"]["nodeName"]].free_count == 0
    assert nodes[other_gpu["spec"]["nodeName"]].free_count == len(other_gpu["spec"]["devices"])
    kept = {n.name for n in NodeFilter({"cluster": "twice", "min_free": "1"}, queryset=Node.objects.all()).qs}
    assert other_gpu["spec"]["nodeName"] in kept and gpu["spec"]["nodeName"] not in kept
    # The list marks the pool and keeps its slices under "only odd slices".
    resp = client_in.get(reverse("inventory:resourceslices", args=["twice"]))
    assert "1 invalid pool" in resp.content.decode()
    assert {s.name for s in resp.context["slices"] if s.pool_invalid} == {gpu["metadata"]["name"], twin["metadata"]["name"]}
    resp = client_in.get(reverse("inventory:resourceslices", args=["twice"]), {"problems": "1"})
    assert {gpu["metadata"]["name"], twin["metadata"]["name"]} <= {s.name for s in resp.context["slices"]}
    assert other["metadata"]["name"] not in {s.name for s in resp.context["slices"]}


def test_every_slice_of_a_large_pool_is_checked_for_a_device_listed_twice(tmp_path, sync_snapshot, client_in):
    """A pool of 60 slices of one generation whose first and last slices list the same GPU:
    both slices' pages say the pool is invalid, the first too (not only 50 siblings read)."""
    from inventory.snapshot import load_path

    objs = load_path(H100_SLICES).objects
    gpu = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    pool = []
    for i in range(60):
        s = copy.deepcopy(gpu)
        s["metadata"]["name"] = f"big-{i:02d}"
        s["metadata"]["uid"] = f"0000big-{i:02d}"
        s["spec"]["pool"].update(name="big", resourceSliceCount=60)
        s["spec"]["devices"] = [dict(copy.deepcopy(gpu["spec"]["devices"][0]), name=f"gpu-{i}")]
        pool.append(s)
    pool[-1]["spec"]["devices"][0]["name"] = "gpu-0"
    sync_snapshot(write_list(tmp_path / "big.json", [*objs, *pool]), "big")
    for name in ("big-00", "big-59"):
        resp = client_in.get(reverse("inventory:resourceslice", args=["big", name]))
        assert resp.context["listed_twice"] == ["gpu-0"], name
    assert client_in.get(reverse("inventory:resourceslice", args=["big", "big-30"])).context["listed_twice"] == ["gpu-0"]
