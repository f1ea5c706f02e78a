"""In headless Chromium on the demo: a list's CSV download holds the filtered rows; a script
with only a token (no session) reads the API, and without it gets 401; an operator attests a
readiness item on the first try (picking the item no longer reloads the panel)."""

from __future__ import annotations

import csv
import io

import pytest

from tests.conftest import logged_in_page


@pytest.mark.browser
def test_the_device_list_downloads_its_filtered_rows_as_csv(page, live_server):
    from inventory.models import Device

    page.goto(live_server.url + "/devices/?cluster=demo&type=mig")
    with page.expect_download() as info:
        page.click("#table a:has-text('CSV')")
    download = info.value
    assert download.suggested_filename.startswith("claimscope-devices-") and download.suggested_filename.endswith(".csv")
    rows = list(csv.DictReader(io.StringIO(open(download.path(), encoding="utf-8").read())))
    expected = Device.objects.filter(cluster__name="demo", type="mig")
    assert len(rows) == expected.count() > 0
    assert {r["cluster"] for r in rows} == {"demo"} and {r["type"] for r in rows} == {"mig"}
    held = [r for r in rows if r["claims"]]
    # pk__in, not .distinct(): PostgreSQL has no equality for the devices' json columns.
    assert len(held) == expected.filter(pk__in=expected.filter(allocations__isnull=False).values("pk")).count()
    assert page.js_errors == []


@pytest.mark.browser
def test_a_script_with_a_token_reads_the_api_and_without_one_gets_401(browser, live_server, demo_db, django_user_model):
    from rest_framework.authtoken.models import Token

    from inventory.models import Device

    user = django_user_model.objects.create_user("script", password="script-pw-1")
    key = Token.objects.create(user=user).key
    context = browser.new_context()  # no login: the token is the only credential
    pg = context.new_page()
    try:
        pg.goto(live_server.url + "/healthz")
        fetch = """async ([url, key]) => {
            const r = await fetch(url, {credentials: "omit", headers: key ? {Authorization: "Token " + key} : {}});
            return [r.status, r.headers.get("content-type"), await r.text()];
        }"""
        status, ctype, body = pg.evaluate(fetch, ["/api/inventory/devices/?cluster=demo&limit=5", key])
        assert status == 200 and ctype == "application/json"
        import json

        data = json.loads(body)
        assert data["count"] == Device.objects.filter(cluster__name="demo").count() and len(data["results"]) == 5
        status, _, _ = pg.evaluate(fetch, ["/api/inventory/devices/", ""])
        assert status == 401
    finally:
        context.close()


@pytest.mark.browser
def test_an_operator_attests_an_item_on_the_first_try(browser, live_server, demo_db, django_user_model):
    from django.contrib.auth.models import Group

    from migration.models import Attestation

    user = django_user_model.objects.create_user("manager", password="manager-pw-1")
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    context, pg = logged_in_page(browser, live_server.url, "manager", "manager-pw-1", width=1280, height=900)
    try:
        pg.goto(live_server.url + "/migration/readiness/?cluster=demo")
        pg.select_option("#attest select[name=item_id]", "evidence")
        pg.wait_for_timeout(600)  # a reload triggered by the select would land here and reset the form
        assert pg.input_value("#attest select[name=item_id]") == "evidence"
        pg.fill("#attest input[name=evidence_url]", "https://git.example.com/gpu-platform/commit/4f2a9c1")
        pg.fill("#attest input[name=note]", "driver pin and runbook")
        pg.click("#attest button[type=submit]")
        pg.wait_for_load_state()
        att = Attestation.objects.get(cluster__name="demo", attested_by=user)
        assert att.item_id == "evidence" and att.evidence_url.endswith("/commit/4f2a9c1")
        assert "driver pin and runbook" in pg.inner_text("body")
        assert pg.js_errors == []
    finally:
        context.close()
