"""The pages people click, opened in headless Chromium on the demo clusters.

Each page must render its main content, load its static assets (no console errors: htmx and
plotly come from our own static files), and keep cluster text escaped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("CLAIMSCOPE_SCREENSHOTS", "")) if os.environ.get("CLAIMSCOPE_SCREENSHOTS") else None


def _shot(page, name: str) -> None:
    if SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.browser
def test_overview_node_and_device_pages_render_in_chromium(page, live_server):
    from inventory.models import Device, Node

    assert "GPU inventory" in page.inner_text("h1")
    assert page.locator("text=Clusters side by side").count() == 1
    _shot(page, "overview")

    node = Node.objects.filter(cluster__name="demo", mig_count__gt=0).order_by("name").first()
    page.goto(live_server.url + node.get_absolute_url())
    assert node.name in page.inner_text("h1")
    assert page.locator("#gpus tr.nested").count() == node.mig_count
    _shot(page, "node")

    page.goto(live_server.url + "/nodes/?cluster=demo")
    rows = page.locator("table.nodes tbody tr")
    assert rows.count() == Node.objects.filter(cluster__name="demo").count()
    page.fill("form.filters input[name=q]", node.name)
    expect(rows).to_have_count(1)
    assert node.name in page.url  # the filtered view is a shareable URL
    _shot(page, "node_list")

    dev = Device.objects.filter(cluster__name="demo", allocations__isnull=False).first()
    page.goto(live_server.url + dev.get_absolute_url())
    assert dev.name in page.inner_text("h1")
    _shot(page, "device")
    assert page.js_errors == []


@pytest.mark.browser
def test_claims_pages_render_in_chromium(page, live_server):
    from inventory.models import ResourceClaim

    page.goto(live_server.url + "/claims/?cluster=demo")
    assert page.locator("#table tbody tr").count() >= 4
    _shot(page, "claims")
    claim = ResourceClaim.objects.filter(cluster__name="demo", state="pending").first()
    page.goto(live_server.url + claim.get_absolute_url())
    assert claim.name in page.inner_text("h1")
    _shot(page, "claim")
    assert page.js_errors == []


@pytest.mark.browser
def test_every_page_in_the_navigation_renders_without_console_errors(page, live_server):
    """CSP is script-src 'self': an inline handler or an htmx filter expression would fail here."""
    hrefs = page.eval_on_selector_all("header.top nav a", "els => els.map(e => e.getAttribute('href'))")
    assert len(hrefs) >= 8
    for href in hrefs:
        page.goto(live_server.url + href)
        page.wait_for_load_state("networkidle")
        assert page.locator("main h1").count() >= 1, href
        _shot(page, "nav-" + href.strip("/").replace("/", "-"))
    page.goto(live_server.url + "/migration/plan/")
    page.select_option("select[name=cluster]", "demo")
    page.wait_for_url("**/migration/plan/?cluster=demo*")
    assert page.js_errors == []


@pytest.mark.browser
def test_typing_in_the_stuck_queue_filter_narrows_the_queue_in_place(page, live_server):
    page.goto(live_server.url + "/claims/stuck/")
    rows = page.locator("#table tbody tr")
    total = rows.count()
    assert total > 1
    page.fill("form.filters input[name=q]", "gpu-rtx-03")
    expect(rows).not_to_have_count(total)
    assert "q=gpu-rtx-03" in page.url
    _shot(page, "stuck-filtered")
    assert page.js_errors == []
