"""The node page's Conditions table in headless Chromium: at 1280 px it stays inside its panel
and the messages get a wide column (in half a page they were squeezed a word per line); at
390 px each condition is a card whose message spans it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import logged_in_page


@pytest.mark.browser
@pytest.mark.parametrize("width", (1280, 390))
def test_node_conditions_fit_with_a_wide_message_column(browser, live_server, demo_db, django_user_model, width):
    django_user_model.objects.create_user("looker", password="looker-pw-1")
    context, page = logged_in_page(browser, live_server.url, "looker", "looker-pw-1", width=width, height=900)
    try:
        page.goto(live_server.url + reverse("inventory:node", args=["demo", "gpu-h200-04"]))
        panel = page.locator(".panel", has=page.locator("h2", has_text="Conditions"))
        table, message = panel.locator("table"), panel.locator("tbody td[data-label=Message]").first
        assert "kubelet" in message.inner_text()
        p, t, m = panel.bounding_box(), table.bounding_box(), message.bounding_box()
        assert t["x"] + t["width"] <= p["x"] + p["width"], "the table runs past its panel"
        assert m["x"] + m["width"] <= p["x"] + p["width"]
        assert m["width"] >= (300 if width == 1280 else 0.8 * t["width"]), f"message column {m['width']} px wide"
    finally:
        context.close()
