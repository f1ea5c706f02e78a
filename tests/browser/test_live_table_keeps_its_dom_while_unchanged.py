"""In Chromium, the stuck queue's refresh sends back what the table shows (static/js/live.js),
gets 204 while nothing changed, and htmx leaves the table's DOM in place."""

from __future__ import annotations

import pytest


@pytest.mark.browser
def test_an_unchanged_refresh_is_204_and_the_table_node_survives(page, live_server):
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if "/claims/stuck/" in r.url and r.request.resource_type in ("xhr", "fetch") else None)
    page.goto(live_server.url + "/claims/stuck/")
    page.wait_for_selector("#table")
    refresh = "() => new Promise(done => { htmx.ajax('GET', location.pathname + location.search, {source: '#table', target: '#table', swap: 'outerHTML'}).then(done); })"
    page.evaluate(refresh)  # first refresh: the browser learns what it shows
    page.evaluate("() => { document.querySelector('#table').dataset.marker = 'kept'; }")
    page.evaluate(refresh)
    assert statuses[-2:] == [200, 204], statuses
    assert page.evaluate("() => document.querySelector('#table').dataset.marker") == "kept"
    assert not page.js_errors, page.js_errors
