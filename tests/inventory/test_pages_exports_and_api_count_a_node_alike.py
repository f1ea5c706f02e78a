"""The node list, its CSV, the API, the node page, the overview and the clusters index give one
count per node on the demo clusters (``load_demo`` and the device-plugin ``legacy-dp``):

- device-plugin GPUs are ``nvidia.com/gpu`` in ``status.allocatable``: a DRA node, which GPU
  Feature Discovery labels ``nvidia.com/gpu.count`` too, has none, and one whose DRA driver
  publishes nothing reads "none published", not "device plugin";
- free is what a new claim could be allocated now: nothing on a cordoned node (its idle
  devices are said apart).
"""

from __future__ import annotations

import csv
import io
import re
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from inventory.models import Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path, sync_snapshot):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    sync_snapshot(settings.BASE_DIR / "demo" / "migration" / "legacy-dp", "legacy-dp", hooks=False)


def _csv(client, **params) -> dict[tuple[str, str], dict[str, str]]:
    resp = client.get(reverse("inventory:nodes"), {"format": "csv", **params})
    body = b"".join(resp.streaming_content).decode()
    return {(r["cluster"], r["name"]): r for r in csv.DictReader(io.StringIO(body))}


def _api(client, **params) -> dict[tuple[str, str], dict]:
    rows = client.get("/api/inventory/nodes/", {"limit": 1000, **params}).json()["results"]
    return {(r["cluster"], r["name"]): r for r in rows}


def _list_rows(client, **params) -> dict[str, str]:
    """node name -> the node list's row text."""
    html = client.get(reverse("inventory:nodes"), {"per_page": 500, **params}).content.decode()
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S)
    out = {}
    for row in rows:
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip()
        if m := re.search(r'href="/clusters/[^/]+/nodes/([^/]+)/"', row):
            out[m.group(1)] = text
    return out


def _overview(client, cluster: str) -> dict:
    return client.get(reverse("inventory:cluster", args=[cluster])).context["totals"]


def test_device_plugin_gpus_are_what_allocatable_holds_everywhere(client_in, demo):
    table, api = _csv(client_in), _api(client_in)
    labelled = [n for n in Node.objects.filter(cluster__name="demo") if n.labels.get("nvidia.com/gpu.count")]
    assert len(labelled) == 11 and not any(n.plugin_gpu_count for n in labelled)  # DRA nodes, GFD-labelled
    for n in labelled:
        assert table[("demo", n.name)]["device_plugin_gpus"] == "" and api[("demo", n.name)]["device_plugin_gpus"] is None
    for cluster in ("demo", "legacy-dp"):
        totals = _overview(client_in, cluster)
        rows = [r for k, r in api.items() if k[0] == cluster]
        assert sum(r["device_plugin_gpus"] or 0 for r in rows) == totals["plugin_gpus"]
        assert sum(int(r["device_plugin_gpus"] or 0) for k, r in table.items() if k[0] == cluster) == totals["plugin_gpus"]
        assert sum(r["device_plugin_mig_instances"] for r in rows) == totals["plugin_migs"]
    # gpu-node-03 runs the mixed MIG strategy: nvidia.com/mig-1g.18gb, no nvidia.com/gpu.
    assert [api[("legacy-dp", f"gpu-node-0{i}")]["device_plugin_gpus"] for i in (1, 2, 3)] == [2, 4, 0]
    assert api[("legacy-dp", "gpu-node-03")]["device_plugin_mig_instances"] == 28
    assert api[("legacy-dp", "cpu-node-01")]["device_plugin_gpus"] is None
    assert (_overview(client_in, "legacy-dp")["plugin_gpus"], _overview(client_in, "demo")["plugin_gpus"]) == (6, 0)


def test_the_node_list_calls_only_device_plugin_nodes_device_plugin(client_in, demo):
    rows = _list_rows(client_in)
    badged = {n: [int(c) for c in re.findall(r"(\d+) device plugin", text)] for n, text in rows.items() if "device plugin" in text}
    # GPUs, then gpu-node-03's MIG instances (nvidia.com/mig-1g.18gb): as the overview counts them.
    assert badged == {"gpu-node-01": [2], "gpu-node-02": [4], "gpu-node-03": [28]}
    # The DRA nodes whose kubelet plugin crash-loops: GPU labels, nothing published.
    for name in ("gpu-h200-05", "gpu-rtx-03"):
        assert "none published" in rows[name] and "device plugin" not in rows[name]
        page = client_in.get(reverse("inventory:node", args=["demo", name]))
        assert page.context["device_plugin_gpus"] is None and "none published" in page.content.decode()
    assert not any("none published" in rows[n] for n in rows if n.startswith(("gpu-node-", "cpu-node-")))
    # The clusters index and the overview's side-by-side table say the device plugin's GPUs.
    for url in (reverse("inventory:clusters"), reverse("inventory:overview")):
        html = client_in.get(url).content.decode()
        assert "GPUs (DRA)" in html and "+ 6 GPUs, 28 MIG on the device plugin" in html


def test_a_cordoned_node_has_nothing_free_on_every_page(client_in, demo):
    node = Node.objects.get(cluster__name="demo", name="gpu-h200-04")
    assert node.unschedulable and node.free_count == 3  # idle devices the scheduler cannot reach
    table, api = _csv(client_in, cluster="demo"), _api(client_in, cluster="demo")
    assert table[("demo", node.name)]["free"] == "0" and api[("demo", node.name)]["free_count"] == 0
    assert "0 (3 idle)" in _list_rows(client_in, cluster="demo")[node.name]
    assert table[("demo", node.name)]["idle"] == "3" and api[("demo", node.name)]["idle_count"] == 3
    page = client_in.get(node.get_absolute_url()).content.decode()
    assert re.search(r"Allocated / free</div><div class=\"num\">1 / 0<", page) and "3 idle" in page
    free = _overview(client_in, "demo")["free"]
    cluster_api = client_in.get("/api/inventory/clusters/demo/").json()["totals"]["free"]
    assert free == sum(int(r["free"]) for r in table.values()) == sum(r["free_count"] for r in api.values()) == cluster_api
    # Sorted by Free, the cordoned node sorts as 0.
    order = list(_list_rows(client_in, cluster="demo", sort="free_count"))
    assert order.index(node.name) < order.index("gpu-h200-01")  # 0 before 2
