"""The node telemetry page charts the history of the node's GPUs from the real, backfilled
Prometheus: the H200 node's line reaches the load plateau, and the eight H100s of gpu-node-1
come back from ONE range query as eight utilization and eight power lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory import charts, prometheus
from inventory.dcgm import parse_exposition
from inventory.models import Cluster, Device
from tests.fixtures.prometheus.build_fixtures import H100_AT, H200_START
from tests.telemetry.pagedata import H200_UUID, PAGE_CHROME, PARTIAL_CHROME, h200_slice_folder
from tests.telemetry.realdata import H100_SCRAPE, H100_SLICES

pytestmark = pytest.mark.django_db
H200_END = datetime.fromtimestamp(H200_START + 41, tz=UTC).isoformat()
H100_END = datetime.fromtimestamp(H100_AT + 30, tz=UTC).isoformat()


@pytest.fixture
def h200(sync_snapshot, tmp_path, prometheus_url):
    sync_snapshot(h200_slice_folder(tmp_path / "h200"), name="h200")
    Cluster.objects.filter(name="h200").update(prometheus_url=prometheus_url)
    return Device.objects.get(cluster__name="h200", uuid=H200_UUID)


@pytest.fixture
def aicr(sync_snapshot, prometheus_url):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    Cluster.objects.filter(name="aicr").update(prometheus_url=prometheus_url)
    return Cluster.objects.get(name="aicr")


@pytest.fixture
def range_queries(monkeypatch):
    """The PromQL of every range query the views send (the queries still run)."""
    sent: list[str] = []
    real = prometheus.range_series

    def spy(url, promql, *args, **kwargs):
        sent.append(promql)
        return real(url, promql, *args, **kwargs)

    monkeypatch.setattr(prometheus, "range_series", spy)
    return sent


def _figure(html: str) -> dict:
    return json.loads(html.split('id="node-fig" type="application/json">')[1].split("</script>")[0])


def test_the_h200_node_chart_reaches_the_load_plateau_of_95_percent_and_690_watts(client_in, h200, django_assert_max_num_queries):
    url = reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name])
    with django_assert_max_num_queries(2 + PARTIAL_CHROME):
        resp = client_in.get(url, {"window": "1h", "end": H200_END})
    html = resp.content.decode()
    assert resp.status_code == 200 and 'data-plotly-src="/static/vendor/plotly/plotly.min.js"' in html
    fig = _figure(html)
    util = next(t for t in fig["data"] if t["yaxis"] == "y")
    power = next(t for t in fig["data"] if t["yaxis"] == "y2")
    assert util["name"] == power["name"] == h200.name
    assert max(util["y"]) >= 95 and min(util["y"]) == 0
    assert 680 <= max(power["y"]) <= 700


def test_the_eight_h100s_of_gpu_node_1_come_from_one_range_query(client_in, aicr, range_queries, django_assert_max_num_queries):
    url = reverse("inventory:telemetry-node-chart-json", args=["aicr", "gpu-node-1"])
    with django_assert_max_num_queries(2 + PARTIAL_CHROME):
        resp = client_in.get(url, {"window": "1h", "end": H100_END})
    fig = json.loads(resp.content)
    samples = parse_exposition(H100_SCRAPE.read_text())
    gpus = Device.objects.filter(cluster=aicr, node_name="gpu-node-1", uuid__in={s.uuid for s in samples})
    assert len(range_queries) == 1 and range_queries[0].count(" or ") == 7
    for d in gpus:
        assert f'UUID="{d.uuid}"' in range_queries[0]
        want = next(s.value for s in samples if s.uuid == d.uuid and s.field == "DCGM_FI_DEV_POWER_USAGE")
        (power,) = [t for t in fig["data"] if t["name"] == d.name and t["yaxis"] == "y2"]
        assert set(power["y"]) == {want}
    assert sum(1 for t in fig["data"] if t["yaxis"] == "y") == gpus.count() == 8


def test_the_node_page_loads_the_chart_lazily_with_the_four_windows(client_in, h200, django_assert_max_num_queries):
    with django_assert_max_num_queries(2 + PAGE_CHROME):
        page = client_in.get(reverse("inventory:telemetry-node", args=["h200", h200.node_name]), {"end": H200_END}).content.decode()
    chart = reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name])
    assert f'hx-get="{chart}?window=1h&amp;end=' in page and 'hx-trigger="intersect once"' in page
    assert "js/telemetry.js" in page and "plotly.min.js" not in page
    for w in ("1h", "6h", "24h", "7d"):
        assert f"?window={w}&amp;end=" in page
    node_page = client_in.get(reverse("inventory:node", args=["h200", h200.node_name])).content.decode()
    assert reverse("inventory:telemetry-node", args=["h200", h200.node_name]) in node_page and "js/telemetry.js" in node_page


def test_a_window_without_series_says_so_beside_empty_axes(client_in, h200):
    resp = client_in.get(reverse("inventory:telemetry-node-chart", args=["h200", h200.node_name]), {"window": "1h", "end": "2020-01-01T00:00:00Z"})
    html = resp.content.decode()
    assert resp.status_code == 200 and "no utilization or power series for this node" in html
    assert _figure(html)["data"] == []


def test_a_node_with_more_gpus_than_the_cap_charts_the_first_ones_and_says_so(client_in, aicr, range_queries, monkeypatch):
    monkeypatch.setattr(charts, "NODE_CHART_GPUS", 3)
    html = client_in.get(reverse("inventory:telemetry-node-chart", args=["aicr", "gpu-node-1"]), {"window": "1h", "end": H100_END}).content.decode()
    assert "Showing the first 3 of 8 GPUs" in html
    assert range_queries[0].count("UUID=") == 3
    assert {t["name"] for t in _figure(html)["data"]} == {"gpu-0", "gpu-1", "gpu-2"}
