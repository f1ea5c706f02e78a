"""The stuck queue lists open findings most severe then oldest, filters by shareable URLs,
refreshes its table alone (with the nav counter out of band), in a bounded number of queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name, expected_category

from claims.models import SEVERITY_RANK, Finding, Severity

pytestmark = pytest.mark.django_db
STUCK = reverse("claims:stuck")
SICK = [c for c in CASE_DIRS if expected_category(c) != "none"]


@pytest.fixture
def synced(sync_snapshot):
    def run(cases):
        for case in cases:
            sync_snapshot(case / "snapshot", name=cluster_name(case))
    return run


def _queries(client, url, **headers) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url, **headers).status_code == 200
    return len(ctx.captured_queries)


def test_rows_are_most_severe_then_oldest(client_in, synced):
    synced(SICK)
    resp = client_in.get(STUCK)
    rows = resp.context["findings"]
    assert len(rows) == min(Finding.objects.open().count(), 50) > 5
    keys = [(SEVERITY_RANK[f.severity], f.since is None, f.since or f.first_seen, f.pk) for f in rows]
    assert keys == sorted(keys)
    assert rows[0].severity == Severity.CRITICAL


def test_category_and_cluster_filters_are_shareable_urls(client_in, synced):
    synced(SICK[:6])
    f = Finding.objects.open().order_by("pk").first()
    url = f"{STUCK}?category={f.category}&cluster={f.cluster.name}"
    rows = client_in.get(url).context["findings"]
    assert rows and all(r.category == f.category and r.cluster_id == f.cluster_id for r in rows)
    other = Finding.objects.exclude(category=f.category).first()
    assert other not in rows


def test_htmx_refresh_returns_the_table_and_the_nav_counter_out_of_band(client_in, synced):
    synced(SICK[:4])
    resp = client_in.get(STUCK, HTTP_HX_REQUEST="true")
    body = resp.content.decode()
    assert body.lstrip().startswith('<div id="table"')
    assert "<html" not in body
    assert 'id="nav-stuck"' in body and 'hx-swap-oob="true"' in body
    n = Finding.objects.open().filter(severity__in=["critical", "warning"]).count()
    assert f'<span class="badge critical">{n}</span>' in body
    assert "HX-Request" in resp["Vary"]


def test_full_page_has_the_nav_counter_once_and_polls_every_10_seconds(client_in, synced):
    synced(SICK[:4])
    body = client_in.get(STUCK).content.decode()
    assert body.count('id="nav-stuck"') == 1
    assert "every 10s" in body and 'hx-push-url="true"' in body


def test_queries_do_not_grow_with_the_number_of_findings(client_in, synced, django_assert_max_num_queries):
    synced(SICK[:2])
    small = _queries(client_in, STUCK)
    small_htmx = _queries(client_in, STUCK, HTTP_HX_REQUEST="true")
    synced(SICK[2:])
    assert Finding.objects.open().count() > 10
    with django_assert_max_num_queries(9):  # + the critical-or-warning count and the snapshot clock
        client_in.get(STUCK)
    assert _queries(client_in, STUCK) == small
    assert _queries(client_in, STUCK, HTTP_HX_REQUEST="true") == small_htmx


def test_cluster_text_is_escaped(client_in, synced):
    synced(SICK[:1])
    Finding.objects.update(summary="<script>alert(1)</script>", name="<b>x</b>")
    body = client_in.get(STUCK).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body
    assert "<b>x</b>" not in body


def test_the_category_filter_offers_the_names_the_table_shows(client_in, synced):
    synced(SICK[:1])
    html = client_in.get(STUCK).content.decode()
    category = expected_category(SICK[0])
    assert f'<option value="{category}">{category}</option>' in html


def test_a_finding_naming_many_objects_folds_all_but_the_first_six(client_in):
    """The demo's metric_not_supported_on_mig names every MIG claim and pod of the cluster: its
    row shows six, the rest behind a "N more" disclosure, each object still linked."""
    from django.core.management import call_command

    call_command("load_demo", "--no-user")
    resp = client_in.get(STUCK, {"cluster": "demo"})
    html = resp.content.decode()
    wide = [f for f in resp.context["findings"] if len(f.links) > 7]
    assert wide
    assert html.count("more</summary>") == len(wide)
    for f in wide:
        assert f"{len(f.links) - 7} more</summary>" in html
        for o in f.involved[1:]:
            assert o["name"] in html


def test_a_finding_without_a_start_time_says_so_instead_of_seen_0_s(client_in):
    """A snapshot's clock is its newest timestamp, so a node finding (no start time) is first
    seen at the clock: "seen 0 s" would read as "just started"."""
    from django.core.management import call_command

    call_command("load_demo", "--no-user")
    resp = client_in.get(STUCK, {"cluster": "demo"})
    html = resp.content.decode()
    assert any(f.since is None for f in resp.context["findings"])
    assert "no start time" in html and "seen 0 s" not in html
