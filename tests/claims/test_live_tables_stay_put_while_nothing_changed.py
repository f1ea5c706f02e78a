"""A live table's refresh (htmx, every 10-15 s) answers 204 No Content when it would render
exactly what the browser shows, so htmx swaps nothing; any change gives a fresh table."""

from __future__ import annotations

import pytest
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name, expected_category

from claims.models import Finding
from inventory.htmx import CONTENT_HEADER, SEEN_HEADER

pytestmark = pytest.mark.django_db
SICK = [c for c in CASE_DIRS if expected_category(c) != "none"]
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.parametrize("url", [reverse("claims:stuck"), reverse("claims:list")])
def test_a_refresh_of_an_unchanged_table_is_204_and_a_changed_one_is_fresh(client_in, sync_snapshot, url):
    for case in SICK[:2]:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    first = client_in.get(url, **HX)
    assert first.status_code == 200 and b'id="table"' in first.content
    shown = first[CONTENT_HEADER]
    same = client_in.get(url, **HX, **{f"HTTP_{SEEN_HEADER.upper().replace('-', '_')}": shown})
    assert same.status_code == 204 and same.content == b"" and same[CONTENT_HEADER] == shown
    # Something both tables show changes (open findings are listed, and badged on claims).
    assert Finding.objects.open().exclude(claim=None).exists()
    Finding.objects.open().delete()
    changed = client_in.get(url, **HX, **{f"HTTP_{SEEN_HEADER.upper().replace('-', '_')}": shown})
    assert changed.status_code == 200 and changed[CONTENT_HEADER] != shown


def test_a_stale_or_forged_seen_header_gets_the_table(client_in, sync_snapshot):
    sync_snapshot(SICK[0] / "snapshot", name=cluster_name(SICK[0]))
    resp = client_in.get(reverse("claims:stuck"), **HX, HTTP_X_CLAIMSCOPE_SEEN="<script>")
    assert resp.status_code == 200 and b'id="table"' in resp.content


def test_a_full_page_load_is_never_204(client_in, sync_snapshot):
    sync_snapshot(SICK[0] / "snapshot", name=cluster_name(SICK[0]))
    first = client_in.get(reverse("claims:stuck"))
    again = client_in.get(reverse("claims:stuck"), HTTP_X_CLAIMSCOPE_SEEN=first[CONTENT_HEADER])
    assert again.status_code == 200 and b"<html" in again.content


def test_the_overview_summary_refresh_is_204_until_a_sync_changes_it(client_in, sync_snapshot):
    from inventory.models import Node

    sync_snapshot(SICK[0] / "snapshot", name=cluster_name(SICK[0]))
    url = reverse("inventory:overview")
    first = client_in.get(url, **HX)
    assert first.status_code == 200 and b'id="summary"' in first.content
    seen = {f"HTTP_{SEEN_HEADER.upper().replace('-', '_')}": first[CONTENT_HEADER]}
    assert client_in.get(url, **HX, **seen).status_code == 204
    Node.objects.update(ready=False)  # the summary counts nodes not ready
    assert client_in.get(url, **HX, **seen).status_code == 200
