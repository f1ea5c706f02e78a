"""The overview says how the cluster is kept current: every N seconds when a broker carries
the scheduled syncs, and "when asked" on the embedded default, where no worker or beat runs
(saying "every 30 s" there was untrue)."""

from __future__ import annotations

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


def test_gpus_on_the_device_plugin_are_counted_beside_the_dra_ones(client_in, tmp_path):
    """The demo's legacy cluster runs the device plugin: its GPUs are in no ResourceSlice, so
    the DRA count is 0, and the card says how many the plugin's nodes advertise (the node list
    shows the same numbers per node)."""
    from io import StringIO

    from django.core.management import call_command

    from inventory.models import Node
    from inventory.object_views import device_plugin_gpus

    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    plugin = [n for n in Node.objects.filter(gpu_count=0) if device_plugin_gpus(n)]
    assert plugin, "the demo has device-plugin nodes"
    name = plugin[0].cluster.name
    want = sum(device_plugin_gpus(n) for n in plugin if n.cluster.name == name)
    body = client_in.get(reverse("inventory:cluster", args=[name])).content.decode()
    assert f"{want} on the device plugin" in body and "Physical GPUs (DRA)" in body
    body = client_in.get(reverse("inventory:overview")).content.decode()
    assert f"{sum(device_plugin_gpus(n) for n in plugin)} on the device plugin" in body
