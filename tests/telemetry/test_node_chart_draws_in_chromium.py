"""The node chart is drawn by plotly.js in headless Chromium under the site's CSP: on the node
telemetry page (H200 plateau) and on the inventory node page, where the telemetry panel and
then the chart load lazily (the eight H100s of gpu-node-1 in the legend)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device
from tests.conftest import logged_in_page
from tests.fixtures.prometheus.build_fixtures import H100_AT, H200_START
from tests.telemetry.pagedata import H200_UUID, h200_slice_folder
from tests.telemetry.realdata import H100_SLICES

H200_END = datetime.fromtimestamp(H200_START + 41, tz=UTC).isoformat()
H100_END = datetime.fromtimestamp(H100_AT + 120, tz=UTC).isoformat()


def _shot(page, name: str) -> None:
    shots = os.environ.get("CLAIMSCOPE_SCREENSHOTS")
    if shots:
        page.screenshot(path=os.path.join(shots, name), full_page=True)


@pytest.mark.browser
def test_the_node_telemetry_page_draws_the_h200_plateau(browser, live_server, transactional_db, sync_snapshot, tmp_path, prometheus_url, django_user_model):
    sync_snapshot(h200_slice_folder(tmp_path / "h200"), name="h200")
    Cluster.objects.filter(name="h200").update(prometheus_url=prometheus_url)
    device = Device.objects.get(cluster__name="h200", uuid=H200_UUID)
    django_user_model.objects.create_user("charts", password="charts-pw-1")
    context, page = logged_in_page(browser, live_server.url, "charts", "charts-pw-1", width=1300, height=1400)
    page.goto(live_server.url + reverse("inventory:telemetry-node", args=["h200", device.node_name]) + f"?window=1h&end={H200_END}")
    page.locator(".plotly-chart .main-svg").first.wait_for(timeout=15000)
    text = page.locator(".plotly-chart").first.inner_text()
    _shot(page, "h200-node-chart.png")
    context.close()
    assert device.name in text and "Power (W)" in text
    assert "100" in text or "95" in text  # the utilization axis reaches the plateau
    assert page.js_errors == []


@pytest.mark.browser
def test_the_inventory_node_page_draws_every_gpu_of_gpu_node_1(browser, live_server, transactional_db, sync_snapshot, prometheus_url, django_user_model):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    Cluster.objects.filter(name="aicr").update(prometheus_url=prometheus_url)
    gpus = sorted(Device.objects.filter(cluster__name="aicr", node_name="gpu-node-1", driver="gpu.nvidia.com", type="gpu").values_list("name", flat=True))
    django_user_model.objects.create_user("charts", password="charts-pw-1")
    context, page = logged_in_page(browser, live_server.url, "charts", "charts-pw-1", width=1300, height=1400)
    page.goto(live_server.url + reverse("inventory:node", args=["aicr", "gpu-node-1"]) + f"?end={H100_END}")
    page.locator("#node-telemetry").scroll_into_view_if_needed()
    page.locator("#node-telemetry .chart-box").first.wait_for(timeout=15000)
    page.locator("#node-telemetry .chart-box").first.scroll_into_view_if_needed()
    page.locator("#node-telemetry .plotly-chart .main-svg").first.wait_for(timeout=15000)
    legend = page.locator("#node-telemetry .plotly-chart .legend").first.text_content()
    _shot(page, "h100-node-page-chart.png")
    context.close()
    assert len(gpus) == 8 and all(name in legend for name in gpus)
    assert page.js_errors == []
