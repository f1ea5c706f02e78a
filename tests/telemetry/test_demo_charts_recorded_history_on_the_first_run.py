"""The demo, loaded once with no Prometheus, charts its recorded hour (built from the real
H200 NVML trace) and every device a claim holds shows DCGM values."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.models import AllocationResult, Cluster, Device, DeviceType, RecordedSeries

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    return Cluster.objects.get(name="demo")


def test_every_device_a_demo_claim_holds_shows_telemetry(demo):
    held = Device.objects.filter(pk__in=AllocationResult.objects.filter(cluster=demo, device__isnull=False).values("device_id"))
    assert held.count() >= 30
    assert [d.name for d in held if not d.metrics] == []


def test_a_busy_held_gpu_charts_its_hour_from_the_recording(client_in, demo):
    assert demo.prometheus_url == "" and RecordedSeries.objects.filter(cluster=demo).exists()
    r = AllocationResult.objects.filter(cluster=demo, device__type=DeviceType.GPU, device__metrics__DCGM_FI_DEV_GPU_UTIL__gte=90).select_related("device").first()
    html = client_in.get(reverse("inventory:telemetry-device-chart", args=[r.device.pk])).content.decode()
    fig = json.loads(html.split(f'id="fig-{r.device.pk}" type="application/json">')[1].split("</script>")[0])
    util = next(t for t in fig["data"] if "GPU_UTIL" in t["name"])
    assert len(util["y"]) > 100 and max(util["y"]) >= 95
    # The chart's last reading is the value the page shows as latest.
    assert util["y"][-1] == r.device.metrics["DCGM_FI_DEV_GPU_UTIL"]


def test_a_node_in_mig_mode_charts_its_instances_and_the_gpus_power(client_in, demo):
    node = AllocationResult.objects.filter(cluster=demo, device__type=DeviceType.MIG).select_related("device").first().device.node_name
    url = reverse("inventory:telemetry-node-chart-json", args=["demo", node])
    names = [t["name"] for t in json.loads(client_in.get(url).content)["data"]]
    assert any("mig" in n for n in names), names
    assert any("MIG mode" in n for n in names), names
