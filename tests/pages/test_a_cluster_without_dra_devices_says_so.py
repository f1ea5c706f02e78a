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
from tests.conftest import H100_SLICES, write_list

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
    assert f"the {sum(legacy.values())} GPUs here are on the device plugin (nvidia.com/gpu), not DRA" in text
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
    assert f"legacy-dp publishes no DRA devices (no ResourceSlice). Its {sum(legacy.values())} GPUs are on the device plugin" in text
    assert PLAN in resp.content.decode()
    # A search that matches nothing in a cluster that does publish devices gets no such note.
    assert "publishes no DRA devices" not in client_in.get(reverse("inventory:devices"), {"q": "nothing-like-this"}).content.decode()
