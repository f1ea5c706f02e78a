"""The overview says how the cluster is kept current: every N seconds when a broker carries
the scheduled syncs, and "when asked" on the embedded default, where no worker or beat runs
(saying "every 30 s" there was untrue)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.conftest import VKS_SLICES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("broker", "said"), [("", "synced when asked"), ("redis://127.0.0.1:6379/0", "sync every 60 s")])
def test_the_overview_says_whether_a_schedule_runs(client_in, sync_snapshot, settings, broker, said):
    from inventory.models import Cluster

    sync_snapshot(VKS_SLICES, "vks")
    Cluster.objects.filter(name="vks").update(sync_interval_seconds=60)
    settings.CELERY_BROKER_URL = broker
    body = client_in.get(reverse("inventory:cluster", args=["vks"])).content.decode()
    assert said in body
    assert ("sync every" in body) == bool(broker)


def test_gpus_on_the_device_plugin_are_counted_beside_the_dra_ones(client_in, tmp_path, sync_snapshot, settings):
    """The demo's legacy cluster runs the device plugin: its GPUs are in no ResourceSlice, so
    the DRA count is 0, and the card says how many its nodes' ``status.allocatable`` holds. The
    DRA cluster's nodes whose driver fails (no slice, an empty pool) keep the GPU feature
    discovery label ``nvidia.com/gpu.count`` but advertise no ``nvidia.com/gpu``: not counted."""
    from io import StringIO

    from django.core.management import call_command

    from inventory.models import Cluster, Node

    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    sync_snapshot(settings.BASE_DIR / "demo" / "migration" / "legacy-dp", "legacy-dp")

    def allocatable(n):
        return int(((n.raw.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", 0))

    by_cluster = {c.name: sum(allocatable(n) for n in Node.objects.filter(cluster=c)) for c in Cluster.objects.all()}
    plugin = [name for name, n in by_cluster.items() if n]
    assert plugin, "the demo has a cluster on the device plugin"
    for name in plugin:
        body = client_in.get(reverse("inventory:cluster", args=[name])).content.decode()
        assert re.search(rf"\b{by_cluster[name]}( GPUs and \d+ MIG instances)? on the device plugin", body)
        assert "Physical GPUs (DRA)" in body
    labelled = {n.cluster.name for n in Node.objects.filter(gpu_count=0, labels__has_key="nvidia.com/gpu.count")
                if not allocatable(n)}
    assert labelled - set(plugin), "the demo has DRA nodes with the GPU label and no slice"
    for name in labelled - set(plugin):
        assert "on the device plugin" not in client_in.get(reverse("inventory:cluster", args=[name])).content.decode()
    body = client_in.get(reverse("inventory:overview")).content.decode()
    assert re.search(rf"\b{sum(by_cluster.values())}( GPUs and \d+ MIG instances)? on the device plugin", body)
