"""A DeviceTaintRule with a NoExecute taint, the real example's shape, aimed at one GPU of
the real H100 slices: the node list's stored Free column and "Free whole GPUs" leave that GPU
out, as the overview's free devices do (before, only dynamic-MIG nodes were counted from the
allocation state; a static node counted a tainted GPU free)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from inventory import queries
from inventory.models import Cluster, Node
from inventory.snapshot import load_path
from tests.conftest import FIXTURES, H100_SLICES, write_list

pytestmark = pytest.mark.django_db

RULE = FIXTURES / "k8s/claims-and-templates/device-taints-tolerations__device-taint-pod-noexecute__3-device-taint-rule.yaml"


def test_a_tainted_gpu_is_not_free_on_the_node_list(tmp_path, sync_snapshot):
    objs = load_path(H100_SLICES).objects
    gpu = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    node, pool, device = gpu["spec"]["nodeName"], gpu["spec"]["pool"]["name"], gpu["spec"]["devices"][0]["name"]
    sync_snapshot(write_list(tmp_path / "before.json", objs), "tainted")
    before = Node.objects.get(cluster__name="tainted", name=node)
    assert before.free_gpu_count == before.free_count == len(gpu["spec"]["devices"])

    rule = copy.deepcopy(yaml.safe_load(RULE.read_text()))
    rule["metadata"]["uid"] = "rule-uid-1"
    rule["spec"]["deviceSelector"] = {"driver": "gpu.nvidia.com", "pool": pool, "device": device}
    sync_snapshot(write_list(tmp_path / "after.json", [*objs, rule]), "tainted")
    after = Node.objects.get(cluster__name="tainted", name=node)
    assert (after.free_count, after.free_gpu_count) == (before.free_count - 1, before.free_gpu_count - 1)
    summary = queries.cluster_dra_summary(Cluster.objects.get(name="tainted"))
    assert summary["free"][node] == after.free_count
    # The rule gone (an empty list of the kind says so), the GPU is free again.
    gone = tmp_path / "gone"
    gone.mkdir()
    write_list(gone / "slices.json", objs)
    (gone / "rules.json").write_text(json.dumps({"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRuleList", "items": []}))
    run = sync_snapshot(gone, "tainted")
    assert run.counts["DeviceTaintRule"]["deleted"] == 1
    again = Node.objects.get(cluster__name="tainted", name=node)
    assert (again.free_count, again.free_gpu_count) == (before.free_count, before.free_gpu_count)
