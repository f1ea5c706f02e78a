"""The device page charts the backfilled real H200 load from Prometheus range queries."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device
from tests.fixtures.prometheus.build_fixtures import H200_START
from tests.telemetry.pagedata import H200_UUID, PARTIAL_CHROME, h200_slice_folder

pytestmark = pytest.mark.django_db
END = datetime.fromtimestamp(H200_START + 41, tz=UTC).isoformat()


@pytest.fixture
def h200(sync_snapshot, tmp_path, prometheus_url):
    sync_snapshot(h200_slice_folder(tmp_path / "h200"), name="h200")
    Cluster.objects.filter(name="h200").update(prometheus_url=prometheus_url)
    return Device.objects.get(cluster__name="h200", uuid=H200_UUID)


def _traces(fig):
    return {t["name"]: t for t in fig["data"]}


def test_the_chart_json_reaches_the_load_plateau_of_95_percent_and_690_watts(client_in, h200, django_assert_max_num_queries):
    url = reverse("inventory:telemetry-device-chart-json", args=[h200.pk])
    with django_assert_max_num_queries(2 + PARTIAL_CHROME):
        resp = client_in.get(url, {"window": "1h", "end": END})
    assert resp.status_code == 200
    traces = _traces(json.loads(resp.content))
    util = next(t for n, t in traces.items() if "DCGM_FI_DEV_GPU_UTIL" in n)
    power = next(t for n, t in traces.items() if "DCGM_FI_DEV_POWER_USAGE" in n)
    assert max(util["y"]) >= 95 and min(util["y"]) == 0
    assert 680 <= max(power["y"]) <= 700
    assert any(n.startswith("FB total") for n in traces) and any("GPU_TEMP" in n for n in traces)


def test_the_lazy_chart_fragment_carries_the_figure_and_loads_plotly_from_static(client_in, h200, django_assert_max_num_queries):
    with django_assert_max_num_queries(2 + PARTIAL_CHROME):
        resp = client_in.get(reverse("inventory:telemetry-device-chart", args=[h200.pk]), {"window": "1h", "end": END})
    html = resp.content.decode()
    assert 'data-plotly-src="/static/vendor/plotly/plotly.min.js"' in html
    fig = json.loads(html.split(f'id="fig-{h200.pk}" type="application/json">')[1].split("</script>")[0])
    assert max(next(t for t in fig["data"] if "GPU_UTIL" in t["name"])["y"]) >= 95


def test_the_device_page_loads_its_telemetry_panel_lazily(client_in, h200, django_assert_max_num_queries):
    with django_assert_max_num_queries(11):
        page = client_in.get(h200.get_absolute_url()).content.decode()
    assert reverse("inventory:telemetry-device", args=[h200.pk]) in page and 'hx-trigger="load"' in page
    assert "plotly.min.js" not in page  # loaded by static/js/telemetry.js only when a chart arrives
    with django_assert_max_num_queries(1 + PARTIAL_CHROME):
        panel = client_in.get(reverse("inventory:telemetry-device", args=[h200.pk]), {"end": END}, HTTP_HX_REQUEST="true")
    body = panel.content.decode()
    assert 'hx-trigger="intersect once"' in body and "<html" not in body
    for w in ("1h", "6h", "24h", "7d"):
        assert f"window={w}" in body


def test_a_window_without_series_gives_an_empty_chart_not_an_error(client_in, h200):
    resp = client_in.get(reverse("inventory:telemetry-device-chart", args=[h200.pk]), {"window": "1h", "end": "2020-01-01T00:00:00Z"})
    assert resp.status_code == 200 and "no series for this device" in resp.content.decode()
