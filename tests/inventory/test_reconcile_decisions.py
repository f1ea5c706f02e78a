"""What the reconcile writes, decided on plain data (``inventory.decide``): no database.

Which objects of a batch are creates and which updates, which stored objects a read removes
(a delta read only those the API server reported), and for the devices of changed
ResourceSlices: pools as the scheduler sees them, where only the newest generation of a pool
publishes and the same generation twice is a conflict of that pool alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inventory import decide
from inventory.parse import parse_resource_slice

GPU = "gpu.nvidia.com"


def _slice(name: str, pool: str, generation: int, *devices: str, driver: str = GPU):
    return parse_resource_slice({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"driver": driver, "nodeName": pool, "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1},
                 "devices": [{"name": d} for d in devices]},
    })  # fmt: skip


def _row(d) -> dict:
    return {"node_name": d.node_name}


def _wanted(*slices):
    return decide.wanted_devices(list(slices), _row)


def test_stored_uids_are_updates_with_their_pk_and_the_others_creates():
    existing = {"a": (11, "5"), "c": (13, "7")}
    assert decide.split(existing, ["a", "b", "c", "d"]) == ([1, 3], [(11, 0), (13, 2)])
    assert decide.split({}, ["a"]) == ([0], [])


def test_a_complete_kind_removes_every_stored_uid_the_read_did_not_see():
    stored = {"a": (1, "1"), "b": (2, "1"), "c": (3, "1")}
    assert decide.vanished(stored, {"b"}) == {1: "a", 3: "c"}
    assert decide.vanished(stored, {"a", "b", "c"}) == {}


def test_a_delta_kind_removes_only_the_reported_uids_it_did_not_see_again():
    stored = {"a": (1, "1"), "b": (2, "1"), "c": (3, "1")}
    # "c" was not seen but not reported either: a watch never saw it go. "b" came back after
    # its delete event; "x" is not stored.
    assert decide.vanished(stored, {"b"}, reported=["a", "b", "x"]) == {1: "a"}
    assert decide.vanished(stored, set(), reported=[]) == {}


def test_each_device_of_a_slice_becomes_a_row_keyed_by_driver_pool_and_name():
    wanted = _wanted((7, _slice("s1", "node-a", 1, "gpu-0", "gpu-1")))
    assert set(wanted.rows) == {(GPU, "node-a", "gpu-0"), (GPU, "node-a", "gpu-1")}
    slice_pk, row = wanted.rows[(GPU, "node-a", "gpu-1")]
    assert slice_pk == 7
    assert row == {"node_name": "node-a", "slice_id": 7, "driver": GPU, "pool": "node-a", "name": "gpu-1"}
    assert wanted.conflicts == () and wanted.incomplete == frozenset()


def test_in_one_batch_the_newer_pool_generation_publishes_in_either_order():
    old, new = (1, _slice("old", "node-a", 1, "gpu-0")), (2, _slice("new", "node-a", 2, "gpu-0"))
    for order in ((old, new), (new, old)):
        wanted = _wanted(*order)
        assert wanted.rows[(GPU, "node-a", "gpu-0")][0] == 2
        assert wanted.conflicts == () and wanted.incomplete == frozenset()


def test_the_same_generation_twice_in_one_batch_is_a_conflict_of_that_pool_only():
    wanted = _wanted(
        (1, _slice("first", "node-a", 3, "gpu-0", "gpu-1")),
        (2, _slice("twin", "node-a", 3, "gpu-0")),
        (3, _slice("other", "node-b", 3, "gpu-0")),
    )
    assert wanted.rows[(GPU, "node-a", "gpu-0")][0] == 1  # the first kept
    assert wanted.rows[(GPU, "node-b", "gpu-0")][0] == 3  # the same name in another pool is another device
    assert [c.pool for c in wanted.conflicts] == [(GPU, "node-a")]
    assert wanted.conflicts[0].message == f"device {GPU}/node-a/gpu-0 published twice in pool generation 3 (slice twin); kept the first"
    assert wanted.incomplete == {2}


def test_a_changed_slice_updates_its_stored_devices_creates_new_ones_and_deletes_the_rest():
    wanted = _wanted((5, _slice("s", "node-a", 1, "gpu-0", "gpu-2"))).rows
    stored = {(GPU, "node-a", "gpu-0"): 100, (GPU, "node-a", "gpu-1"): 101}
    plan = decide.device_changes(wanted, stored, {}, {5: 1})
    assert plan.update == [(100, wanted[(GPU, "node-a", "gpu-0")][1])]
    assert [r["name"] for r in plan.create] == ["gpu-2"]
    assert plan.delete == [101]
    assert plan.conflicts == () and plan.incomplete == frozenset()


def test_a_re_created_slice_of_a_higher_generation_takes_the_devices_over():
    # The driver restarted: a slice of a new name (pk 9) publishes what slice 4 holds.
    wanted = _wanted((9, _slice("s-r2", "node-a", 2, "gpu-0"))).rows
    plan = decide.device_changes(wanted, {}, {(GPU, "node-a", "gpu-0"): (100, 4)}, {9: 2, 4: 1})
    assert len(plan.update) == 1
    device_pk, row = plan.update[0]
    assert device_pk == 100 and row["slice_id"] == 9  # the same device row, moved to the new slice
    assert plan.create == [] and plan.delete == [] and plan.conflicts == ()


def test_a_slice_of_an_older_generation_waits_while_its_holder_lasts():
    wanted = _wanted((9, _slice("stale", "node-a", 1, "gpu-0"))).rows
    plan = decide.device_changes(wanted, {}, {(GPU, "node-a", "gpu-0"): (100, 4)}, {9: 1, 4: 2})
    assert plan.create == [] and plan.update == [] and plan.delete == []
    assert plan.conflicts == () and plan.incomplete == frozenset()
    assert [(k, pk, holder, row["slice_id"]) for k, pk, holder, row in plan.older] == [((GPU, "node-a", "gpu-0"), 100, 4, 9)]
    # The holder stays (seen in the read): nothing moves.
    assert decide.take_over(plan.older, set(), {9: 1, 4: 2}, {100}).update == []
    # The holder is gone from a complete read: the older slice is now the pool's newest.
    taken = decide.take_over(plan.older, {4}, {9: 1, 4: 2}, {100})
    assert [(pk, row["slice_id"]) for pk, row in taken.update] == [(100, 9)] and taken.create == []
    # The holder had dropped that device in the same read: it is created for the new slice.
    taken = decide.take_over(plan.older, {4}, {9: 1, 4: 2}, set())
    assert taken.update == [] and [r["slice_id"] for r in taken.create] == [9]


def test_of_two_waiting_slices_the_newer_takes_the_device_and_a_tie_is_a_conflict():
    key = (GPU, "node-a", "gpu-0")
    older = [(key, 100, 4, {"slice_id": 9}), (key, 100, 4, {"slice_id": 10})]
    taken = decide.take_over(older, {4}, {4: 5, 9: 1, 10: 3}, {100})
    assert [(pk, row["slice_id"]) for pk, row in taken.update] == [(100, 10)] and taken.conflicts == ()
    taken = decide.take_over(older, {4}, {4: 5, 9: 3, 10: 3}, {100})
    assert [row["slice_id"] for _, row in taken.update] == [9]
    assert [c.pool for c in taken.conflicts] == [(GPU, "node-a")] and taken.incomplete == {10}


def test_the_same_generation_as_the_holder_is_a_conflict_of_that_pool_only():
    wanted = _wanted((9, _slice("twin", "node-a", 2, "gpu-0")), (10, _slice("b", "node-b", 2, "gpu-0"))).rows
    plan = decide.device_changes(wanted, {}, {(GPU, "node-a", "gpu-0"): (100, 4)}, {9: 2, 10: 2, 4: 2})
    assert [c.pool for c in plan.conflicts] == [(GPU, "node-a")]
    assert plan.conflicts[0].message == f"device {GPU}/node-a/gpu-0 is also published by another slice of pool generation 2; kept the first"
    assert plan.incomplete == {9}
    assert [(r["pool"], r["slice_id"]) for r in plan.create] == [("node-b", 10)]  # the other pool is written
    assert plan.update == []


def test_only_pools_of_devices_not_stored_are_searched_for_other_holders():
    wanted = [(GPU, "node-a", "gpu-0"), (GPU, "node-b", "gpu-0")]
    stored = {(GPU, "node-a", "gpu-0"): 1}
    assert decide.pools_to_search(wanted, stored) == {(GPU, "node-b")}
    # A cluster without devices before the sync: only the pools it has written since.
    assert decide.pools_to_search(wanted, {}, written={(GPU, "node-a")}) == {(GPU, "node-a")}
    assert decide.pools_to_search(wanted, {}, written=set()) == set()


def test_the_decisions_import_nothing_of_django():
    code = "import sys, inventory.decide; sys.exit(1 if any(m.split('.')[0] == 'django' for m in sys.modules) else 0)"
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


def _claim(name: str, *results: tuple[str, str, str], reserved: tuple[str, ...] = ()):
    from inventory.parse import parse_resource_claim

    return parse_resource_claim({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        "status": {
            "allocation": {"devices": {"results": [
                {"request": "gpu", "driver": d, "pool": p, "device": n} for d, p, n in results]}},
            "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"} for pod in reserved],
        },
    })  # fmt: skip


def test_a_claims_results_point_at_stored_devices_and_await_the_others():
    claims = [(3, _claim("train", (GPU, "node-a", "gpu-0"), (GPU, "node-b", "gpu-9"), reserved=("pod-1",)))]
    made = decide.claim_children(claims, {(GPU, "node-a", "gpu-0"): (100, "node-a")}, cluster_pk=1)
    assert [(r["claim_id"], r["device_name"], r["device_id"]) for r in made.results] == [(3, "gpu-0", 100), (3, "gpu-9", None)]
    assert made.nodes == {"node-a"}
    assert made.reservations == [{"claim_id": 3, "resource": "pods", "name": "pod-1", "uid": "uid-pod-1"}]
    assert made.errors == () and made.unread == frozenset()


def test_a_result_naming_what_no_api_server_serves_is_reported_and_its_claim_read_again():
    long_pool = "p" * (decide.MAX_RESULT_NAME + 1)
    claims = [(3, _claim("odd", (GPU, long_pool, "gpu-0"), (GPU, "node-a", "gpu-1"))), (4, _claim("fine", (GPU, "node-a", "gpu-2")))]
    made = decide.claim_children(claims, {}, cluster_pk=1)
    assert [r["device_name"] for r in made.results] == ["gpu-1", "gpu-2"]
    assert made.unread == {3}
    assert made.errors == (f"allocation result {GPU}/{'p' * 63}/gpu-0: names longer than 253 characters",)
