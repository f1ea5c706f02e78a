"""When Prometheus cannot be reached the poll records why, keeps the old values, and every
telemetry page still renders the inventory with "metrics stale since T"."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device
from inventory.tasks import poll_metrics
from tests.prometheus_server import free_port
from tests.telemetry.pagedata import h100_scrape_folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead(sync_snapshot, tmp_path):
    sync_snapshot(h100_scrape_folder(tmp_path / "aicr"), name="aicr")
    Cluster.objects.filter(name="aicr").update(prometheus_url=f"http://127.0.0.1:{free_port()}")
    return Cluster.objects.get(name="aicr")


def test_a_refused_connection_is_recorded_and_the_scrape_values_are_kept(dead):
    before = dict(Device.objects.filter(cluster=dead).values_list("pk", "metrics"))
    assert poll_metrics.apply(args=[dead.pk]).get() == "unavailable"
    dead.refresh_from_db()
    assert "cannot reach Prometheus" in dead.metrics_error
    assert dict(Device.objects.filter(cluster=dead).values_list("pk", "metrics")) == before
    assert any(before.values())


@pytest.mark.parametrize("page", ["device", "device_panel", "node", "node_panel", "heatmap", "unmatched", "index", "idle"])
def test_every_page_renders_with_the_stale_message(client_in, dead, page, django_assert_max_num_queries):
    poll_metrics.apply(args=[dead.pk]).get()
    dev = Device.objects.exclude(metrics={}).filter(cluster=dead).first()
    url = {
        "device": dev.get_absolute_url(),
        "device_panel": reverse("inventory:telemetry-device", args=[dev.pk]),
        "node": reverse("inventory:node", args=["aicr", dev.node_name]),
        "node_panel": reverse("inventory:telemetry-node", args=["aicr", dev.node_name]),
        "heatmap": reverse("inventory:telemetry-heatmap", args=["aicr"]),
        "unmatched": reverse("inventory:telemetry-unmatched", args=["aicr"]),
        "index": reverse("inventory:telemetry"),
        "idle": reverse("inventory:telemetry-idle"),
    }[page]
    # The node page's 13th: which of its pools' generations are superseded.
    with django_assert_max_num_queries(13 if page == "node" else 12):
        resp = client_in.get(url)
    html = resp.content.decode()
    assert resp.status_code == 200 and "metrics stale since" in html
    if page in ("device", "node", "heatmap"):
        assert dev.name in html


def test_the_chart_says_why_there_is_no_history(client_in, dead):
    dev = Device.objects.exclude(metrics={}).filter(cluster=dead).first()
    html = client_in.get(reverse("inventory:telemetry-device-chart", args=[dev.pk])).content.decode()
    assert "No chart: cannot reach Prometheus" in html
    assert client_in.get(reverse("inventory:telemetry-device-chart-json", args=[dev.pk])).status_code == 503
