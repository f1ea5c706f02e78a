"""The benchmark fleet has the shape issue 12 asks for, per node: 8 H200 NVL, half in MIG 7x
1g.18gb (32 devices), 8 claims and 8 GPU pods, 20 other pods with the fields a real pod has,
3 Events; its objects are consistent the way an API server keeps them."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest
import yaml

from devtools.benchfleet import change_one_claim, generate_benchmark_fleet
from inventory.normalize import normalize
from inventory.snapshot import newest_timestamp
from tests.conftest import CASES
from tests.devtools.test_fleet_consistency_helpers import allocation_problems, device_index, of_kind

NODES = 6
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def fleet():
    return generate_benchmark_fleet(NODES, seed=3, now=NOW)


@pytest.fixture(scope="module")
def real_pod():
    docs = yaml.safe_load_all((CASES / "healthy-vks-real" / "snapshot" / "cluster.yaml").read_text())
    return next(d for d in docs if d and d["kind"] == "Pod")


def _gpu_pods(fleet):
    return [p for p in of_kind(fleet, "Pod") if p["spec"].get("resourceClaims")]


def test_each_node_publishes_four_whole_gpus_and_28_mig_instances(fleet):
    devices = device_index(fleet).values()
    per_node = Counter((d.node_name, d.type) for d in devices)
    assert {n for n, _ in per_node} == {n["metadata"]["name"] for n in of_kind(fleet, "Node")}
    for node in {n for n, _ in per_node}:
        assert (per_node[(node, "gpu")], per_node[(node, "mig")]) == (4, 28)
    assert {d.product_name for d in devices} == {"NVIDIA H200 NVL"}
    profiles = {d["attributes"]["profile"]["string"] for s in of_kind(fleet, "ResourceSlice") for d in s["spec"]["devices"]
                if d["attributes"]["type"]["string"] == "mig"}
    assert profiles == {"1g.18gb"}


def test_eight_claims_and_gpu_pods_twenty_other_pods_and_three_events_per_node(fleet):
    assert len(of_kind(fleet, "ResourceClaim")) == 8 * NODES
    assert len(_gpu_pods(fleet)) == 8 * NODES
    assert len(of_kind(fleet, "Pod")) == 28 * NODES
    assert len(of_kind(fleet, "Event")) == 3 * NODES
    plain_by_node = Counter(p["spec"]["nodeName"] for p in of_kind(fleet, "Pod") if not p["spec"].get("resourceClaims"))
    assert set(plain_by_node.values()) == {20}


def test_claims_exist_in_every_state_and_allocations_are_consistent(fleet):
    from inventory import parse

    states = Counter(parse.parse_resource_claim(c).state for c in of_kind(fleet, "ResourceClaim"))
    assert set(states) == {"pending", "allocated", "in_use", "deleting"}
    assert allocation_problems(fleet) == []


def test_pods_without_gpus_carry_every_field_of_the_real_pod(fleet, real_pod):
    plain = [p for p in of_kind(fleet, "Pod") if not p["spec"].get("resourceClaims")]
    want_spec = set(real_pod["spec"]) - {"resourceClaims"}
    for p in plain:
        assert set(real_pod["metadata"]) <= set(p["metadata"])
        assert want_spec <= set(p["spec"]), want_spec - set(p["spec"])
        assert set(real_pod["status"]) - {"resourceClaimStatuses"} <= set(p["status"])
        c, real_c = p["spec"]["containers"][0], real_pod["spec"]["containers"][0]
        assert set(real_c) - {"args", "command"} <= set(c)
        assert set(real_pod["status"]["containerStatuses"][0]) <= set(p["status"]["containerStatuses"][0])
    daemon = [p for p in plain if p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"]
    assert len(daemon) == 10 * NODES
    for p in daemon:
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms[0]["matchFields"][0]["values"] == [p["spec"]["nodeName"]]


def test_objects_are_v1_unique_and_no_later_than_now(fleet):
    assert all(normalize(o) is o for o in fleet)
    uids = [o["metadata"]["uid"] for o in fleet]
    assert len(set(uids)) == len(uids)
    newest = datetime.fromisoformat(newest_timestamp(fleet).replace("Z", "+00:00"))
    assert newest <= NOW


def test_same_seed_gives_the_same_fleet():
    assert generate_benchmark_fleet(2, seed=9, now=NOW) == generate_benchmark_fleet(2, seed=9, now=NOW)
    assert generate_benchmark_fleet(2, seed=9, now=NOW) != generate_benchmark_fleet(2, seed=8, now=NOW)


def test_changing_one_claim_changes_only_that_claim(fleet):
    changed, claim = change_one_claim(fleet, NOW)
    differ = [(a, b) for a, b in zip(fleet, changed, strict=True) if a != b]
    assert [b for _, b in differ] == [claim]
    before, after = differ[0]
    assert int(after["metadata"]["resourceVersion"]) > max(int(o["metadata"]["resourceVersion"]) for o in fleet)
    assert after["metadata"]["deletionTimestamp"] and not before["metadata"].get("deletionTimestamp")
    assert after["status"]["reservedFor"] and after["metadata"]["finalizers"]


def test_a_fleet_needs_a_node():
    with pytest.raises(ValueError):
        generate_benchmark_fleet(0)
