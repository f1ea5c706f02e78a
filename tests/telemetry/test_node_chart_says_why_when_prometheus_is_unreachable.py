"""When the cluster's Prometheus cannot be reached, or none is configured, the node chart says
why in the fragment (HTTP 200), the JSON endpoint answers 503, and the node pages still render."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device
from tests.prometheus_server import free_port
from tests.telemetry.pagedata import PAGE_CHROME, PARTIAL_CHROME, h200_slice_folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def h200(sync_snapshot, tmp_path):
    sync_snapshot(h200_slice_folder(tmp_path / "h200"), name="h200")
    return Device.objects.get(cluster__name="h200", type="gpu")


def test_a_refused_connection_gives_the_reason_in_place_of_the_chart(client_in, h200, django_assert_max_num_queries):
    Cluster.objects.filter(name="h200").update(prometheus_url=f"http://127.0.0.1:{free_port()}")
    with django_assert_max_num_queries(2 + PARTIAL_CHROME):
        resp = client_in.get(reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name]))
    html = resp.content.decode()
    assert resp.status_code == 200 and "No chart: cannot reach Prometheus" in html and "node-fig" not in html
    resp = client_in.get(reverse("inventory:telemetry-node-chart-json", args=["h200", h200.node_name]))
    assert resp.status_code == 503 and "cannot reach Prometheus" in resp.content.decode()
    with django_assert_max_num_queries(2 + PAGE_CHROME):
        page = client_in.get(reverse("inventory:telemetry-node", args=["h200", h200.node_name]))
    assert page.status_code == 200 and h200.name in page.content.decode()


def test_a_cluster_without_prometheus_shows_latest_values_and_no_chart_box(client_in, h200):
    page = client_in.get(reverse("inventory:telemetry-node", args=["h200", h200.node_name])).content.decode()
    assert "charts need Prometheus" in page and reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name]) not in page
    html = client_in.get(reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name])).content.decode()
    assert "No chart: no Prometheus configured for this cluster" in html


def test_an_unknown_node_is_404(client_in, h200):
    assert client_in.get(reverse("inventory:telemetry-node-chart", args=["h200", "no-such-node"])).status_code == 404
