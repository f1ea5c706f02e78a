"""``inventory --format json``: per node ``allocatable_now_by_profile``, per device ``taints``,
``health`` and every holder, after syncing real-shaped DRA objects."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from django.core.management import call_command

from tests.dra import shapes

pytestmark = pytest.mark.django_db
NODE = "gpu-node-1"
EXAMPLE_POOL = "dra-example-driver-cluster-worker"


def _mig_claim(name, device):
    return shapes.allocate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "team-a"},
         "spec": {"devices": {"requests": [{"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}},
        [shapes.result("mig", device, NODE)], node=NODE)  # fmt: skip


def _objects():
    objs = shapes.dynamic_mig_node(NODE)
    objs[3]["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]  # gpu-2
    claims = [_mig_claim("a", "gpu-0-mig-3g71gb-9-0"), _mig_claim("b", "gpu-1"), _mig_claim("c", "gpu-2-mig-1g18gb-me-20-0")]
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain-gpu-3", "uid": "uid-rule"},
            "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-3"},
                     "taint": {"key": "example.com/maintenance", "effect": "NoExecute"}}}  # fmt: skip
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "team-a", "uid": "uid-trainer"},
           "spec": {"nodeName": NODE, "containers": [{"name": "main", "image": "cuda", "resources": {"claims": [{"name": "mig"}]}}],
                    "resourceClaims": [{"name": "mig", "resourceClaimName": "a"}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "main", "ready": True, "allocatedResourcesStatus": [
               {"name": "claim:mig", "resources": [{"resourceID": f"gpu.nvidia.com/{NODE}/gpu-0-mig-3g71gb-9-0", "health": "Unhealthy"}]}]}]}}  # fmt: skip
    doc = yaml.safe_load((shapes.FIXTURES / "k8s" / "resourceslices" / "dra-example-driver-mock-gpus.v1.yaml").read_text())
    shared = copy.deepcopy(doc["items"][0] if doc.get("kind") == "List" else doc)
    shared["spec"]["devices"][0]["allowMultipleAllocations"] = True
    sharers = [o for o in shapes.example("gpu-allow-multiple-allocations__gpu-allow-multiple-allocations.yaml") if o["kind"] == "ResourceClaim"]
    held = [shapes.allocate(c, [shapes.result("gpu", "gpu-0", EXAMPLE_POOL, driver="gpu.example.com", shareID=f"share-{i}",
                                              consumedCapacity={"memory": "16Gi"})]) for i, c in enumerate(sharers)]  # fmt: skip
    return [*objs, *claims, rule, pod, shared, *held]


def test_inventory_json_reports_what_can_still_be_allocated_and_each_devices_taints_health_and_sharers(tmp_path, capsys):
    shapes.sync(_objects(), tmp_path / "snapshot.json", "dra")
    capsys.readouterr()
    call_command("inventory", "--format", "json", "--cluster", "dra")
    doc = json.loads(capsys.readouterr().out)
    nodes = {n["name"]: n for n in doc["clusters"][0]["nodes"]}
    got = nodes[NODE]["allocatable_now_by_profile"]
    # GPU 0: 3g at slices 0-3 held -> 1g at 4,5,6; GPU 1 whole held; GPU 2: +me at 0 held, its
    # whole-GPU device tainted (xid, NoSchedule) -> 1g at 1..6; GPU 3: whole device drained
    # (NoExecute rule), its placements untouched.
    assert got["1g.18gb"] == 3 + 0 + 6 + 7
    assert got["gpu"] == 0
    assert got["7g.141gb"] == 1
    devs = {d["name"]: d for d in nodes[NODE]["devices"]}
    assert devs["gpu-3"]["taints"] == [{"key": "example.com/maintenance", "value": None, "effect": "NoExecute"}]
    assert devs["gpu-2"]["taints"] == [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    assert devs["gpu-2"]["health"] == "Unhealthy"
    assert devs["gpu-0-mig-3g71gb-9-0"]["health"] == "Unhealthy"
    assert devs["gpu-0"]["health"] is None and devs["gpu-0"]["taints"] == []
    example = {d["name"]: d for d in nodes[EXAMPLE_POOL]["devices"]}
    assert [h["claim"] for h in example["gpu-0"]["holders"]] == [
        "gpu-allow-multiple-allocations/shared-gpu-pod0", "gpu-allow-multiple-allocations/shared-gpu-pod1"]
    assert example["gpu-0"]["capacity_left"] == {"gpu.example.com/memory": str((80 - 32) * 2**30)}
    assert nodes[EXAMPLE_POOL]["allocatable_now_by_profile"] == {}  # the example driver publishes no GPU type
