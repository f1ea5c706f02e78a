"""The platform engineer's path in headless Chromium, by clicking: overview -> cluster -> node
-> GPU (in MIG mode, its instances nested) -> MIG instance (with its DCGM values) -> the claim
holding it -> the pod it is reserved for, which names the node again."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect


def _held_mig_instance():
    from inventory.models import AllocationResult, Reservation

    for r in AllocationResult.objects.filter(cluster__name="demo", device__type="mig").select_related("device", "claim").order_by("pk"):
        if Reservation.objects.filter(claim=r.claim).exists():
            return r.device, r.claim
    raise AssertionError("the demo has a MIG instance held by a claim reserved for a pod")


@pytest.mark.browser
def test_overview_to_node_to_gpu_to_mig_instance_to_claim_to_pod(page, live_server):
    device, claim = _held_mig_instance()
    page.goto(live_server.url + "/")
    page.click("text=Clusters side by side >> xpath=ancestor::div[contains(@class,'panel')] >> a:text-is('demo')")
    expect(page).to_have_url(f"{live_server.url}/clusters/demo/")

    page.goto(live_server.url + "/nodes/?cluster=demo")
    page.click(f"table.nodes a:text-is('{device.node_name}')")
    expect(page.locator("h1")).to_contain_text(device.node_name)
    # The GPU row: in MIG mode, its instances nested under it, this one among them.
    minor = device.name.split("-")[1]
    expect(page.locator("#gpus tr", has_text=f"gpu {minor}").filter(has_text="MIG mode")).to_have_count(1)
    row = page.locator("#gpus tr.nested", has=page.locator(f"a:text-is('{device.name}')"))
    expect(row).to_contain_text(device.profile)
    expect(row).to_contain_text(claim.name)  # the row says who holds it
    row.locator(f"a:text-is('{device.name}')").click()

    expect(page.locator("h1")).to_contain_text(device.name)
    expect(page.locator("main")).to_contain_text(device.parent_uuid)
    # Its telemetry: latest values from the demo's exporter page, and a chart of the recording.
    page.goto(live_server.url + reverse("inventory:telemetry-device", args=[device.pk]))
    expect(page.locator("#telemetry-panel")).to_contain_text("Graphics engine")
    page.locator(".chart-box").scroll_into_view_if_needed()
    expect(page.locator(".plotly-chart .main-svg").first).to_be_visible(timeout=15000)

    page.goto(live_server.url + device.get_absolute_url())
    page.click(f"main a[href='{claim.get_absolute_url()}']")
    expect(page.locator("h1")).to_contain_text(claim.name)
    pod_link = page.locator("main a[href*='/claims/pods/']").first
    pod_name = pod_link.inner_text()
    pod_link.click()
    expect(page.locator("h1")).to_contain_text(pod_name.split("/")[-1])
    expect(page.locator("main")).to_contain_text(device.node_name)
    assert page.js_errors == []
