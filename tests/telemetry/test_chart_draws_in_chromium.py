"""The H200 load chart is drawn by plotly.js in headless Chromium, under the site's CSP."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device
from tests.conftest import logged_in_page
from tests.fixtures.prometheus.build_fixtures import H200_START
from tests.telemetry.pagedata import H200_UUID, h200_slice_folder

END = datetime.fromtimestamp(H200_START + 41, tz=UTC).isoformat()


@pytest.mark.browser
def test_the_device_chart_draws_the_h200_plateau(browser, live_server, transactional_db, sync_snapshot, tmp_path, prometheus_url, django_user_model):
    sync_snapshot(h200_slice_folder(tmp_path / "h200"), name="h200")
    Cluster.objects.filter(name="h200").update(prometheus_url=prometheus_url)
    device = Device.objects.get(cluster__name="h200", uuid=H200_UUID)
    django_user_model.objects.create_user("charts", password="charts-pw-1")
    context, page = logged_in_page(browser, live_server.url, "charts", "charts-pw-1", width=1300, height=1400)
    page.goto(live_server.url + reverse("inventory:telemetry-device", args=[device.pk]) + f"?window=1h&end={END}")
    page.locator(".plotly-chart .main-svg").first.wait_for(timeout=15000)
    text = page.locator(".plotly-chart").first.inner_text()
    shots = os.environ.get("CLAIMSCOPE_SCREENSHOTS")
    if shots:
        page.screenshot(path=os.path.join(shots, "h200-chart.png"), full_page=True)
    context.close()
    assert "100" in text or "95" in text  # the utilization axis reaches the plateau
    assert page.js_errors == []
