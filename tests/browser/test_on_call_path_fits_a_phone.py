"""The on-call path (stuck queue -> claim -> runbook -> pod -> node) in headless Chromium at
390 px (a phone) and 1280 px: no page scrolls sideways, search and log-out stay reachable,
and on the phone the navigation folds behind "Menu" and the stuck queue's rows are cards."""

from __future__ import annotations

import pytest

from tests.conftest import logged_in_page

WIDTHS = (390, 1280)


def _fits(page, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width} px"


def _path(live_server):
    """URLs of one stuck claim's path, from the demo's stored findings."""
    from django.urls import reverse

    from claims.models import Finding
    from inventory.models import Pod, ResourceClaim

    for finding in Finding.objects.open().filter(cluster__name="demo", claim__isnull=False).order_by("pk"):
        claim = ResourceClaim.objects.get(pk=finding.claim_id)
        pods = [o for o in finding.involved if o.get("kind") == "Pod"]
        pod = next((p for o in pods for p in Pod.objects.filter(cluster=claim.cluster, namespace=o.get("namespace"),
                                                                  name=o.get("name"))), None)
        if pod is not None and claim.node_name:
            break
    else:
        raise AssertionError("the demo has a stuck claim on a node with a stored pod")
    node_url = reverse("inventory:node", args=[claim.cluster.name, claim.node_name])
    return [
        ("stuck", reverse("claims:stuck")),
        ("claim", claim.get_absolute_url()),
        ("runbook", f"{finding.get_runbook_url()}?finding={finding.pk}"),
        ("pod", reverse("claims:pod", args=[pod.cluster.name, pod.namespace, pod.name])),
        ("node", node_url),
    ]


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_on_call_path_never_scrolls_sideways(browser, live_server, demo_db, django_user_model, width):
    django_user_model.objects.create_user("oncall", password="oncall-pw-1")
    context, page = logged_in_page(browser, live_server.url, "oncall", "oncall-pw-1", width=width, height=844)
    try:
        for name, url in _path(live_server):
            page.goto(live_server.url + url)
            assert page.locator("main h1, main h2").first.is_visible(), name
            _fits(page, width)
            assert page.locator("header input[type=search]").is_visible(), name
            assert page.locator("header button:has-text('Log out')").is_visible(), name
        assert page.js_errors == []
    finally:
        context.close()


@pytest.mark.browser
def test_phone_navigation_folds_behind_menu_and_rows_become_cards(browser, live_server, demo_db, django_user_model):
    django_user_model.objects.create_user("oncall", password="oncall-pw-1")
    context, page = logged_in_page(browser, live_server.url, "oncall", "oncall-pw-1", width=390, height=844)
    try:
        page.goto(live_server.url + "/claims/stuck/")
        nodes_link = page.locator("#main-nav a", has_text="Nodes")
        assert not nodes_link.is_visible()
        page.click("text=Menu")
        assert nodes_link.is_visible()
        row = page.locator("#table table.stack tbody tr").first
        box = row.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert page.locator("#table thead").is_hidden()  # rows are labelled cards, not columns
        # The search from the header finds a node on the phone too.
        from inventory.models import Node

        node = Node.objects.filter(cluster__name="demo").order_by("name").first()
        page.fill("header input[type=search]", node.name)
        page.press("header input[type=search]", "Enter")
        page.wait_for_load_state()
        assert node.name in page.inner_text("main")
        _fits(page, 390)
    finally:
        context.close()


@pytest.mark.browser
def test_desktop_shows_the_navigation_and_the_stuck_table_columns(browser, live_server, demo_db, django_user_model):
    django_user_model.objects.create_user("desk", password="desk-pw-1")
    context, page = logged_in_page(browser, live_server.url, "desk", "desk-pw-1", width=1280, height=900)
    try:
        page.goto(live_server.url + "/claims/stuck/")
        assert page.locator("#main-nav a", has_text="Nodes").is_visible()
        assert not page.locator("label.nav-toggle-label").is_visible()
        assert page.locator("#table thead th", has_text="Stuck for").is_visible()
    finally:
        context.close()
