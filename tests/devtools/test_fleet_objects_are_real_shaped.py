"""generate_fleet objects parse like real ones and are consistent with each other."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from devtools.fleet import generate_fleet
from inventory import parse
from inventory.normalize import normalize
from tests.devtools.test_fleet_consistency_helpers import allocation_problems, device_index, of_kind

GIB = Decimal(1024**3)


@pytest.fixture(scope="module")
def fleet():
    return generate_fleet(60, seed=11)


def test_every_object_is_already_v1(fleet):
    assert all(normalize(o) is o for o in fleet)


def test_one_gpu_slice_per_node_owned_by_its_node(fleet):
    nodes = {n["metadata"]["name"]: n["metadata"]["uid"] for n in of_kind(fleet, "Node")}
    slices = [parse.parse_resource_slice(s) for s in of_kind(fleet, "ResourceSlice")]
    assert sorted(s.node_name for s in slices) == sorted(nodes)
    for raw, s in zip(of_kind(fleet, "ResourceSlice"), slices, strict=True):
        assert s.driver == "gpu.nvidia.com" and s.pool == s.node_name and s.resource_slice_count == 1
        assert raw["metadata"]["ownerReferences"][0]["uid"] == nodes[s.node_name]


def test_whole_gpus_carry_the_attributes_the_nvidia_driver_publishes(fleet):
    want = {"addressingMode", "architecture", "brand", "cudaComputeCapability", "cudaDriverVersion", "driverVersion",
            "productName", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot", "type", "uuid"}
    gpus = [d for s in of_kind(fleet, "ResourceSlice") for d in s["spec"]["devices"] if d["attributes"]["type"]["string"] == "gpu"]
    assert gpus
    for d in gpus:
        assert set(d["attributes"]) == want
        assert list(d["capacity"]) == ["memory"]
        for v in d["attributes"].values():
            assert len(v) == 1 and next(iter(v)) in ("string", "int", "bool", "version")


def test_memory_is_what_the_driver_reports_per_product(fleet):
    sizes = {(d.product_name, d.memory_bytes) for d in device_index(fleet).values() if d.type == "gpu"}
    by_product = {p: Decimal(m) / GIB for p, m in sizes}
    assert len(by_product) == len(sizes) == 3
    assert Decimal("95.5") < by_product["NVIDIA RTX PRO 6000 Blackwell Server Edition"] < Decimal("95.7")
    assert Decimal("140.3") < by_product["NVIDIA H200 NVL"] < Decimal("140.5")
    assert by_product["NVIDIA H100 80GB HBM3"] * 1024 == 81559


def test_about_half_the_gpus_are_mig_partitioned(fleet):
    devs = device_index(fleet).values()
    whole = {d.uuid for d in devs if d.type == "gpu"}
    parents = {d.parent_uuid for d in devs if d.type == "mig"}
    assert not whole & parents, "a GPU in MIG mode is published only as its instances"
    assert 0.3 < len(parents) / (len(whole) + len(parents)) < 0.7


def test_node_labels_match_the_published_gpus(fleet):
    devs = device_index(fleet).values()
    for n in of_kind(fleet, "Node"):
        labels = n["metadata"]["labels"]
        mine = [d for d in devs if d.node_name == n["metadata"]["name"]]
        gpus = {d.uuid for d in mine if d.type == "gpu"} | {d.parent_uuid for d in mine if d.type == "mig"}
        assert int(labels["nvidia.com/gpu.count"]) == len(gpus)
        assert labels["nvidia.com/mig.config.state"] == "success"
        assert parse.node_ready(n) and parse.node_kubelet_version(n).startswith("v1.3")
    tainted = [n for n in of_kind(fleet, "Node") if n["spec"].get("taints")]
    assert len(tainted) > len(of_kind(fleet, "Node")) // 2


def test_allocations_name_existing_devices_once_and_reservations_name_pods(fleet):
    assert allocation_problems(fleet) == []


def test_claims_exist_in_every_state_about_two_per_node(fleet):
    claims = [parse.parse_resource_claim(c) for c in of_kind(fleet, "ResourceClaim")]
    states = Counter(c.state for c in claims)
    assert set(states) == {"pending", "allocated", "in_use", "deleting"}
    assert 1.5 * 60 <= len(claims) <= 2 * 60
    for c in claims:
        assert c.pod_claim_name and c.owner_pod_uid
        if c.state == "deleting":
            assert "resource.kubernetes.io/delete-protection" in c.finalizers


def test_pods_point_at_their_generated_claims_and_templates_exist(fleet):
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in of_kind(fleet, "ResourceClaim")}
    templates = {(t["metadata"]["namespace"], t["metadata"]["name"]) for t in of_kind(fleet, "ResourceClaimTemplate")}
    pods = of_kind(fleet, "Pod")
    assert pods
    for p in pods:
        ns = p["metadata"]["namespace"]
        for ref in p["spec"]["resourceClaims"]:
            assert (ns, ref["resourceClaimTemplateName"]) in templates
        for name in parse.pod_claim_names(p):
            owner = claims[(ns, name)]["metadata"]["ownerReferences"][0]
            assert owner["uid"] == p["metadata"]["uid"]


def test_events_come_in_both_shapes(fleet):
    events = of_kind(fleet, "Event")
    sched = [e for e in events if e.get("series")]
    core = [e for e in events if e.get("count")]
    assert sched and core
    for e in sched:
        assert e["eventTime"] and e["firstTimestamp"] is None and e["lastTimestamp"] is None
        assert e["reportingComponent"] == "default-scheduler" and e["series"]["count"] >= 1
    for e in core:
        assert e["eventTime"] is None and e["firstTimestamp"] and e["source"]["component"]
