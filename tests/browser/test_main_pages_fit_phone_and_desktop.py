"""Every main page of the demo in headless Chromium at 1280 px and 390 px: it renders its
title, never scrolls sideways, logs no console error, and the telemetry pages draw their charts
from the recorded history (the demo has no Prometheus). With CLAIMSCOPE_SCREENSHOTS=<dir> each
page is also saved there as <name>-<width>.png (keep them out of git: e.g. a folder in /tmp)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.urls import reverse

from tests.conftest import logged_in_page

WIDTHS = (1280, 390)
SHOTS = Path(os.environ["CLAIMSCOPE_SCREENSHOTS"]) if os.environ.get("CLAIMSCOPE_SCREENSHOTS") else None


def _pages() -> dict[str, str]:
    from claims.models import Finding
    from inventory.models import AllocationResult, Device, Reservation

    held = AllocationResult.objects.filter(cluster__name="demo", device__type="mig").select_related("device", "claim").first()
    busy = Device.objects.filter(cluster__name="demo", type="gpu", metrics__DCGM_FI_DEV_GPU_UTIL__gte=90).first()
    f = Finding.objects.open().filter(cluster__name="demo", claim__isnull=False).order_by("severity_rank", "pk").first()
    res = Reservation.objects.filter(claim=held.claim).first()
    return {
        "overview": "/", "clusters": reverse("inventory:clusters"), "nodes": reverse("inventory:nodes"),
        "node": reverse("inventory:node", args=["demo", held.device.node_name]), "devices": reverse("inventory:devices"),
        "device": held.device.get_absolute_url(), "claims": reverse("claims:list"), "stuck": reverse("claims:stuck"),
        "claim": f.claim.get_absolute_url(), "runbook": f"{f.get_runbook_url()}?finding={f.pk}",
        "pod": reverse("claims:pod", args=["demo", held.claim.namespace, res.name]),
        "telemetry": reverse("inventory:telemetry"), "telemetry-device": reverse("inventory:telemetry-device", args=[busy.pk]),
        "telemetry-node": reverse("inventory:telemetry-node", args=["demo", busy.node_name]),
        "heatmap": reverse("inventory:telemetry-heatmap", args=["demo"]), "idle": reverse("inventory:telemetry-idle"),
        "readiness": reverse("migration:readiness"), "plan": reverse("migration:plan") + "?cluster=demo",
    }  # fmt: skip


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_every_main_page_fits_and_draws(browser, live_server, demo_db, django_user_model, width):
    django_user_model.objects.create_user("looker", password="looker-pw-1")
    context, page = logged_in_page(browser, live_server.url, "looker", "looker-pw-1", width=width, height=900)
    try:
        for name, url in _pages().items():
            page.goto(live_server.url + url)
            page.wait_for_load_state("networkidle")
            assert page.locator("main h1").first.is_visible(), name
            if page.locator(".chart-box").count():
                page.locator(".chart-box").first.scroll_into_view_if_needed()
                page.wait_for_selector(".plotly-chart .main-svg", timeout=15000)
                page.evaluate("window.scrollTo(0, 0)")
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{name} is {wide} px wide at {width} px"
            if SHOTS:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            assert page.js_errors == [], (name, page.js_errors)
    finally:
        context.close()
