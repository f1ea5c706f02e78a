"""A cluster whose GPUs are all on the device plugin (no ResourceSlice: demo/migration/legacy-dp)
is said to publish no DRA devices wherever a page would otherwise have nothing to show, with
its device-plugin GPUs and the migration plan: not "only gpu.nvidia.com publishes devices"
with none published, not "no GPU devices" on nodes that have GPUs, not a bare "No devices
match". A node without any GPU still reads "no GPU devices"."""

from __future__ import annotations

import re
from io import StringIO

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from inventory.models import Device, Node
from tests.conftest import CASES, H100_SLICES, write_list

pytestmark = pytest.mark.django_db
PLAN = reverse("migration:plan") + "?cluster=legacy-dp"


@pytest.fixture
def legacy(sync_snapshot):
    sync_snapshot(settings.BASE_DIR / "demo" / "migration" / "legacy-dp", "legacy-dp")
    assert not Device.objects.exists()
    plugin = {n.name: n.plugin_gpu_count for n in Node.objects.all()}
    assert plugin["cpu-node-01"] == 0 and sum(plugin.values()) > 0
    return plugin


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_cluster_overview_says_its_gpus_are_on_the_device_plugin(client_in, legacy):
    html = client_in.get(reverse("inventory:cluster", args=["legacy-dp"])).content.decode()
    assert "Only gpu.nvidia.com publishes devices here" not in html
    text = _text(html)
    assert "No driver publishes DRA devices here" in text
    migs = sum(n.plugin_mig_count for n in Node.objects.all())  # gpu-node-03: MIG's mixed strategy
    assert (f"the {sum(legacy.values())} GPUs and {migs} MIG instances here are on the device plugin"
            " (nvidia.com/gpu, nvidia.com/mig-*), not DRA") in text
    assert PLAN in html


def test_a_cluster_with_gpu_devices_only_still_says_so(client_in, sync_snapshot, tmp_path):
    slices = [s for s in yaml.safe_load(H100_SLICES.read_text())["items"] if s["spec"]["driver"] == "gpu.nvidia.com"]
    sync_snapshot(write_list(tmp_path / "gpu-only.json", slices), name="aicr", hooks=False)
    html = client_in.get(reverse("inventory:cluster", args=["aicr"])).content.decode()
    assert "Only gpu.nvidia.com publishes devices here" in html


def test_the_heatmap_counts_device_plugin_gpus_instead_of_none(client_in, legacy):
    html = client_in.get(reverse("inventory:telemetry-heatmap", args=["legacy-dp"])).content.decode()
    text = _text(html)
    assert "legacy-dp publishes no DRA devices" in text and PLAN in html
    for node in Node.objects.all():
        gpus, migs = node.device_plugin_gpus, node.plugin_mig_count  # status.allocatable, never the label
        row = _text(re.search(rf">{node.name}</a>.*?</tr>", html, re.S).group(0))
        if gpus:
            assert f"{gpus} GPUs" in row and "on the device plugin" in row and "no GPU devices" not in row
        if migs:  # gpu-node-03: MIG's mixed strategy, nvidia.com/mig-1g.18gb alone
            assert f"{migs} MIG instances on the device plugin" in row
        if not (gpus or migs):
            assert "no GPU devices" in row


def test_the_heatmap_says_a_dra_node_whose_driver_publishes_nothing_is_no_device_plugin_node(client_in, tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    down = [n for n in Node.objects.filter(cluster__name="demo") if n.unpublished_gpus]
    assert down, "the demo holds DRA nodes whose kubelet plugin publishes nothing"
    html = client_in.get(reverse("inventory:telemetry-heatmap", args=["demo"])).content.decode()
    for node in down:
        row = _text(re.search(rf">{node.name}</a>.*?</tr>", html, re.S).group(0))
        assert "none published" in row and "device plugin" not in row and "no GPU devices" not in row


def test_the_device_list_of_the_cluster_says_why_it_is_empty(client_in, legacy):
    resp = client_in.get(reverse("inventory:devices"), {"cluster": "legacy-dp"})
    assert resp.context["table"].page.paginator.count == 0
    text = _text(resp.content.decode())
    migs = sum(n.plugin_mig_count for n in Node.objects.all())
    assert (f"legacy-dp publishes no DRA devices (no ResourceSlice). Its {sum(legacy.values())} GPUs and {migs} MIG"
            " instances are on the device plugin") in text
    assert PLAN in resp.content.decode()
    # A search that matches nothing in a cluster that does publish devices gets no such note.
    assert "publishes no DRA devices" not in client_in.get(reverse("inventory:devices"), {"q": "nothing-like-this"}).content.decode()


def test_a_cluster_whose_slices_list_no_device_is_an_empty_pool_not_a_missing_slice(client_in, sync_snapshot):
    from inventory.models import ResourceSlice

    sync_snapshot(CASES / "empty-slice-non-mig-capable-gpu" / "snapshot", "empty")
    assert ResourceSlice.objects.filter(cluster__name="empty").exists() and not Device.objects.exists()
    devices = _text(client_in.get(reverse("inventory:devices"), {"cluster": "empty"}).content.decode())
    heatmap = _text(client_in.get(reverse("inventory:telemetry-heatmap", args=["empty"])).content.decode())
    overview = _text(client_in.get(reverse("inventory:cluster", args=["empty"])).content.decode())
    assert "empty publishes no DRA devices (its ResourceSlices list no device: an empty pool" in devices
    assert "its gpu.nvidia.com ResourceSlices list no device: an empty pool" in heatmap
    for text in (devices, heatmap, overview):
        assert "no ResourceSlice" not in text


def test_device_plugin_mig_instances_alone_are_named_too(client_in, sync_snapshot, tmp_path):
    # legacy-dp's gpu-node-03 alone: MIG's mixed strategy, nvidia.com/mig-1g.18gb and no nvidia.com/gpu.
    docs = yaml.safe_load_all((settings.BASE_DIR / "demo" / "migration" / "legacy-dp" / "nodes-mixed.yaml").read_text())
    mixed = [d for d in docs if d and d.get("kind") == "Node" and d["metadata"]["name"] == "gpu-node-03"]
    sync_snapshot(write_list(tmp_path / "mixed.json", mixed), "mixed")
    [node] = Node.objects.filter(cluster__name="mixed")
    assert node.plugin_mig_count and not node.plugin_gpu_count
    devices = _text(client_in.get(reverse("inventory:devices"), {"cluster": "mixed"}).content.decode())
    overview = _text(client_in.get(reverse("inventory:cluster", args=["mixed"])).content.decode())
    want = f"{node.plugin_mig_count} MIG instances"
    assert f"Its {want} are on the device plugin (nvidia.com/mig-*)" in devices
    assert f"the {want} here are on the device plugin (nvidia.com/mig-*), not DRA" in overview
