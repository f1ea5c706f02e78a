"""The node page shows the Node's conditions, capacity and allocatable and the recent Events
about it; a device-plugin node shows its GPUs from allocatable (no ResourceSlice lists them)."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from inventory.models import Node
from tests.conftest import CASES, write_list
from tests.migration.migration_fixtures import WORKLOADS

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


def _node_object(path) -> dict:
    for doc in yaml.safe_load_all(path.read_text()):
        for item in (doc or {}).get("items", [doc]) if (doc or {}).get("kind", "").endswith("List") else [doc]:
            if item and item.get("kind") == "Node":
                return item
    raise AssertionError("no Node")


def test_conditions_capacity_allocatable_and_node_events(client_in, sync_snapshot, tmp_path, django_assert_max_num_queries):
    node = _node_object(MIG_CASE)
    name = node["metadata"]["name"]
    event = {  # what the node controller records when a kubelet stops posting status
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{name}.18b2c4e1f0a1b2c3", "namespace": "default", "uid": "e-node-1"},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]},
        "reason": "NodeNotReady", "message": f"Node {name} status is now: NodeNotReady", "type": "Normal",
        "source": {"component": "node-controller"}, "count": 1,
        "firstTimestamp": "2026-11-12T15:40:00Z", "lastTimestamp": "2026-11-12T15:40:00Z",
    }
    sync_snapshot(write_list(tmp_path / "c.json", [node, event]), name="one", hooks=False)
    with django_assert_max_num_queries(20):
        resp = client_in.get(reverse("inventory:node", args=["one", name]))
    ctx = resp.context
    assert [c["type"] for c in ctx["conditions"]] == [c["type"] for c in node["status"]["conditions"]]
    assert ctx["capacity"] == node["status"]["capacity"] and ctx["allocatable"] == node["status"]["allocatable"]
    assert [e.reason for e in ctx["events"]] == ["NodeNotReady"]
    body = resp.content.decode()
    assert "NodeNotReady" in body and reverse("inventory:yaml", args=["node", Node.objects.get(name=name).pk]) in body


def test_a_device_plugin_node_shows_its_gpus_from_allocatable(client_in, sync_snapshot):
    sync_snapshot(WORKLOADS, name="legacy", hooks=False)
    dp = [n for n in Node.objects.filter(cluster__name="legacy")
          if ((n.raw.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu")]
    assert dp and all(n.gpu_count == 0 for n in dp)
    for n in dp:
        want = int(n.raw["status"]["allocatable"]["nvidia.com/gpu"])
        resp = client_in.get(n.get_absolute_url())
        assert resp.context["device_plugin_gpus"] == want > 0
        assert "device plugin" in resp.content.decode()
    listed = client_in.get(reverse("inventory:nodes"), {"cluster": "legacy"}).content.decode()
    assert "device plugin" in listed
