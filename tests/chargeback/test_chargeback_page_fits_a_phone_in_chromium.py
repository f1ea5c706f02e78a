"""The chargeback page on the demo clusters in headless Chromium, at 390 px (a phone) and
1280 px: it never scrolls sideways, the trend chart is drawn, rows are cards on the phone,
and no script error or CSP violation occurs."""

from __future__ import annotations

import pytest

from tests.conftest import logged_in_page


@pytest.fixture
def demo_db(transactional_db):
    from django.core.management import call_command

    call_command("load_demo", "--no-user")


def _busiest_cluster() -> str:
    from django.db.models import Count

    from claims.ledger.models import ChargebackHolding

    row = (ChargebackHolding.objects.values("cluster__name").annotate(n=Count("pk")).order_by("-n", "cluster__name").first())
    assert row, "the demo's syncs recorded holdings in the chargeback ledger"
    return row["cluster__name"]


@pytest.mark.browser
@pytest.mark.parametrize("width", (390, 1280))
def test_chargeback_page_fits_and_draws_its_chart(browser, live_server, demo_db, django_user_model, width):
    django_user_model.objects.create_user("manager", password="manager-pw-1")
    name = _busiest_cluster()
    context, page = logged_in_page(browser, live_server.url, "manager", "manager-pw-1", width=width, height=844)
    try:
        page.goto(f"{live_server.url}/claims/chargeback/?cluster={name}&window=30d")
        assert page.locator("main h1").is_visible()
        page.wait_for_selector(".plotly-chart[data-drawn] svg", timeout=15000)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"the chargeback page is {wide} px wide at {width} px"
        row = page.locator("table.stack tbody tr").first
        box = row.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        if width == 390:
            assert page.locator("table.stack thead").first.is_hidden()
        assert page.js_errors == []
    finally:
        context.close()
