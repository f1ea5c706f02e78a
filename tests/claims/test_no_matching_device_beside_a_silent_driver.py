"""A node whose driver publishes nothing only takes over a no-match claim when its labelled
GPUs could match; labels that rule it out leave no_matching_device standing, and the driver
finding then neither lists the claim nor counts it as waiting for that node."""

from __future__ import annotations

import copy

from claims.diagnosis.rules_node import labelled_gpu
from claims.diagnosis.state import ClusterState
from tests.claims.diag_helpers import load_yaml, of_kind
from tests.claims.diag_helpers import run as run_diagnosis

CASE = "cases/no-matching-device-memory-selector/snapshot/cluster.yaml"


def _with_silent_node(memory_mib: str):
    objs = load_yaml(CASE)
    node = copy.deepcopy(of_kind(objs, "Node")[0])
    name = node["metadata"]["name"] + "-silent"
    node["metadata"]["name"] = name
    node["metadata"]["uid"] = node["metadata"]["uid"][:-4] + "9999"
    node["metadata"]["labels"]["kubernetes.io/hostname"] = name
    node["metadata"]["labels"]["nvidia.com/gpu.memory"] = memory_mib
    objs.append(node)
    return objs, name


def _categories(findings):
    return {f.category for f in findings}


def test_a_silent_node_whose_labelled_memory_is_too_small_leaves_no_matching_device():
    objs, _ = _with_silent_node("81559")  # 79.6 GiB H100: under the 100Gi selector
    cats = _categories(run_diagnosis(objs))
    assert "no_matching_device" in cats
    assert "driver_not_publishing_on_node" in cats


def test_the_driver_finding_of_a_node_too_small_for_the_claim_does_not_claim_it():
    objs, silent = _with_silent_node("81559")
    findings = run_diagnosis(objs)
    driver = next(f for f in findings if f.category == "driver_not_publishing_on_node")
    assert any(o.kind == "Node" and o.name == silent for o in driver.objects)
    assert not [o for o in driver.objects if o.kind == "ResourceClaim"]
    assert driver.evidence["affected_claims"] == [] and driver.severity == "warning"
    assert "wait for a device" not in driver.summary


def test_a_silent_node_whose_labelled_gpu_could_match_owns_the_claim():
    objs, silent = _with_silent_node("143771")  # 140.4 GiB H200 NVL: would match
    findings = run_diagnosis(objs)
    cats = _categories(findings)
    assert "no_matching_device" not in cats
    driver = next(f for f in findings if f.category == "driver_not_publishing_on_node")
    assert any(o.kind == "Node" and o.name == silent for o in driver.objects)


def test_labelled_gpu_reads_memory_in_mib_and_product_with_spaces():
    objs, silent = _with_silent_node("143771")
    state = ClusterState.from_objects(objs)
    gpu = labelled_gpu(state.nodes[silent])
    assert gpu.memory_bytes == 143771 * 2**20
    assert gpu.capacity["gpu.nvidia.com/memory"] == "143771Mi"
    assert gpu.product_name == "NVIDIA H100 80GB HBM3"
