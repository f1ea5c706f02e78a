"""On the claims list at 1400 px the Findings column stays inside its card: long snake_case
category names (driver_not_publishing_on_noc) wrap instead of overflowing."""

from __future__ import annotations

import pytest

from tests.conftest import login


@pytest.mark.browser
def test_findings_column_fits_inside_the_claims_card_at_1400_px(browser, live_server, transactional_db,
                                                                 django_user_model):
    from django.core.management import call_command

    from claims.models import Finding

    call_command("load_demo", "--no-user")
    assert Finding.objects.open().filter(claim__isnull=False).exists()
    longest = max(Finding.objects.open().filter(claim__isnull=False).values_list("category", flat=True), key=len)
    django_user_model.objects.create_user("wrap", password="wrap-pw-1")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        login(page, live_server.url, "wrap", "wrap-pw-1")
        page.goto(live_server.url + "/claims/")
        cells = page.locator("td.findings-cell")
        assert cells.count() > 0
        # The name reads whole (its break opportunities are <wbr> elements, not text).
        assert longest in page.eval_on_selector_all("td.findings-cell a", "els => els.map(e => e.textContent)")
        overflow = page.evaluate("""() => {
            const table = document.querySelector('#table');
            const box = table.getBoundingClientRect();
            const out = [];
            for (const a of document.querySelectorAll('td.findings-cell a')) {
                const r = a.getBoundingClientRect();
                if (r.right > box.right + 0.5) out.push(a.textContent);
            }
            return {cut: out, scroll: table.scrollWidth - table.clientWidth};
        }""")
        assert overflow["cut"] == [] and overflow["scroll"] <= 0, overflow
    finally:
        context.close()
