"""Text from a cluster longer than any column once allowed (a 5,000-character kubeletVersion,
a 3,000-character productName, a node name past the DNS limit in a slice) never drops the Node,
the slice or its devices: descriptive columns are text and keep it whole; the few columns in an
index keep 512 characters ending in "…", so the cut is visible."""

from __future__ import annotations

import copy

import pytest

from inventory.fields import INDEX_CLIP
from inventory.models import Cluster, Device, Node, ResourceSlice, SourceKind
from inventory.snapshot import load_path
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from tests.conftest import H100_SLICES, write_list

pytestmark = pytest.mark.django_db

LONG_VERSION = "v1.34.2-eks-" + "0123456789abcdef" * 312
LONG_PRODUCT = "NVIDIA H100 80GB HBM3 " + "x" * 3000
LONG_NODE = "gpu-node-" + "n" * 600


def _node(name: str, kubelet: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name[:40]}", "resourceVersion": "7", "labels": {"kubernetes.io/hostname": name}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": kubelet}}}


def test_long_versions_products_and_node_names_are_stored_not_dropped(tmp_path):
    slices = copy.deepcopy(load_path(H100_SLICES).objects)
    gpu_slice = next(s for s in slices if s["spec"]["driver"] == "gpu.nvidia.com")
    gpu = gpu_slice["spec"]["devices"][0]
    gpu["attributes"]["productName"] = {"string": LONG_PRODUCT}
    other = next(s for s in slices if s is not gpu_slice and s["spec"]["driver"] == "gpu.nvidia.com")
    other["spec"]["nodeName"] = LONG_NODE
    objects = [_node(gpu_slice["spec"]["nodeName"], LONG_VERSION), *slices]
    cluster = Cluster.objects.create(name="long", source_kind=SourceKind.SNAPSHOT)
    run = sync_cluster(cluster, SnapshotSource(write_list(tmp_path / "s.json", objects)))
    assert run.status == "ok", run.errors
    assert ResourceSlice.objects.filter(cluster=cluster).count() == len(slices)
    assert Device.objects.filter(cluster=cluster).count() == sum(len(s["spec"]["devices"]) for s in slices)
    node = Node.objects.get(cluster=cluster, name=gpu_slice["spec"]["nodeName"])
    assert node.kubelet_version == LONG_VERSION  # a text column: kept whole
    dev = Device.objects.get(cluster=cluster, pool=gpu_slice["spec"]["pool"]["name"], name=gpu["name"])
    assert len(dev.product_name) == INDEX_CLIP and dev.product_name.endswith("…")
    assert dev.product_name[:-1] == LONG_PRODUCT[: INDEX_CLIP - 1]
    moved = Device.objects.filter(cluster=cluster, driver="gpu.nvidia.com", pool=other["spec"]["pool"]["name"])
    assert moved.count() == len(other["spec"]["devices"])
    assert {d.node_name for d in moved} == {LONG_NODE[: INDEX_CLIP - 1] + "…"}


def test_a_short_value_is_stored_unchanged():
    slices = load_path(H100_SLICES).objects
    assert all(len(str(d.get("attributes", {}).get("productName", {}).get("string", ""))) < INDEX_CLIP
               for s in slices for d in s["spec"]["devices"])
    from inventory.fields import clip_text

    assert clip_text("NVIDIA H100 80GB HBM3", INDEX_CLIP) == "NVIDIA H100 80GB HBM3"
    assert clip_text(None, INDEX_CLIP) is None
