"""Taints Kubernetes itself manages (the cordon taint ``node.kubernetes.io/unschedulable``,
not-ready, unreachable, pressure taints, the cloud provider's ``uninitialized``) do not keep
ordinary workloads off GPU nodes: they go when the node is uncordoned or recovers. Only a
dedicated taint (e.g. ``nvidia.com/gpu=present:NoSchedule``) counts for ``gpu_nodes_tainted``."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest
from migration_fixtures import CASES, find, load

from devtools.demo import build_demo
from inventory.snapshot import load_path
from migration.readiness import evaluate_readiness

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
ITEM = "gpu_nodes_tainted"

MANAGED_TAINTS = (
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/network-unavailable", "NoSchedule"),
    ("node.cloudprovider.kubernetes.io/uninitialized", "NoSchedule"),
    ("node.cloudprovider.kubernetes.io/shutdown", "NoSchedule"),
)


def _production_like():
    return load(
        "nvidia_v1alpha1_gpucluster.yaml",
        "workloads/nodes-mixed.yaml",
        "workloads/workloads.yaml",
        "workloads/operator.yaml",
    )


def _gpu_node_names(objects):
    return [o["metadata"]["name"] for o in objects
            if o.get("kind") == "Node" and o["metadata"].get("labels", {}).get("nvidia.com/gpu.present") == "true"]


def _item(objects):
    return evaluate_readiness(objects, NOW).item(ITEM)


def test_the_fixture_cluster_passes_with_its_dedicated_taints():
    assert _item(_production_like()).status == "pass"


@pytest.mark.parametrize(("key", "effect"), MANAGED_TAINTS, ids=[k for k, _ in MANAGED_TAINTS])
def test_a_gpu_node_with_only_a_kubernetes_managed_taint_fails_and_is_named(key, effect):
    objects = _production_like()
    node_name = _gpu_node_names(objects)[0]
    find(objects, "Node", node_name)["spec"]["taints"] = [{"key": key, "effect": effect}]
    item = _item(objects)
    assert item.status == "fail"
    named = [line for line in item.evidence if node_name in line]
    assert named and any("dedicated" in line for line in named)
    assert any(key in line for line in named)  # says which taint it has, and that it does not count


def test_a_cordoned_gpu_node_that_also_has_a_dedicated_taint_still_passes():
    objects = _production_like()
    node = find(objects, "Node", _gpu_node_names(objects)[0])
    node["spec"]["unschedulable"] = True
    node["spec"]["taints"].append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    item = _item(objects)
    assert item.status == "pass"
    assert not any("node.kubernetes.io/unschedulable" in line and "tainted" in line for line in item.evidence)


def test_a_look_alike_key_outside_the_kubernetes_prefixes_still_counts():
    objects = _production_like()
    for name in _gpu_node_names(objects):
        find(objects, "Node", name)["spec"]["taints"] = [{"key": "example.com/node.kubernetes.io-gpu", "effect": "NoSchedule"}]
    assert _item(objects).status == "pass"


def test_the_demo_cordoned_node_is_named_as_lacking_a_dedicated_taint():
    objects = build_demo(NOW).objects
    cordoned_only = [
        o["metadata"]["name"] for o in objects
        if o.get("kind") == "Node" and (o.get("spec") or {}).get("taints")
        and all(t["key"].startswith("node.kubernetes.io/") for t in o["spec"]["taints"])
    ]
    assert cordoned_only  # the demo has a cordoned GPU node without its dedicated taint
    item = _item(objects)
    assert item.status == "fail"
    for name in cordoned_only:
        assert any(name in line and "dedicated" in line for line in item.evidence)


CASE_SNAPSHOTS = sorted(CASES.glob("*/snapshot"))


@pytest.mark.parametrize("path", CASE_SNAPSHOTS, ids=lambda p: p.parent.name)
def test_cordoning_every_node_never_changes_the_item_on_a_case(path):
    # The cordon taint is no evidence either way: adding it to every node of a real case
    # must leave the verdict as it was.
    objects = load_path(path).objects
    cordoned = copy.deepcopy(objects)
    for o in cordoned:
        if o.get("kind") == "Node":
            spec = o.setdefault("spec", {})
            spec["unschedulable"] = True
            spec["taints"] = [*(spec.get("taints") or []), {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    assert _item(cordoned).status == _item(objects).status


@pytest.mark.parametrize("path", CASE_SNAPSHOTS, ids=lambda p: p.parent.name)
def test_on_every_case_a_pass_means_each_gpu_node_has_a_taint_outside_the_kubernetes_prefixes(path):
    objects = load_path(path).objects
    item = _item(objects)
    if item.status != "pass":
        return
    for line in item.evidence:
        assert "node.kubernetes.io/" not in line.split(" tainted ", 1)[-1]
        assert "node.cloudprovider.kubernetes.io/" not in line.split(" tainted ", 1)[-1]
