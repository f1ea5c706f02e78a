"""A finding's "for 47 min" is measured to the page's own now, not frozen at the analysis
that wrote it: four and a half minutes later the summary, the stuck-for column, the claim's
lifecycle panel and its Events all say the same, later, time."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from claims.models import Finding
from inventory.models import Cluster, SourceKind

pytestmark = pytest.mark.django_db


@pytest.fixture
def later(tmp_path, monkeypatch):
    """The demo analysed now, read as a live cluster 4 min 30 s later (its pages' clock is the
    wall clock, which is moved on)."""
    t0 = timezone.now()
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    Cluster.objects.filter(name="demo").update(source_kind=SourceKind.KUBECONFIG)
    at = t0 + timedelta(minutes=4, seconds=30)
    monkeypatch.setattr(timezone, "now", lambda: at)
    return at


def _finding(category):
    return Finding.objects.open().select_related("claim").get(cluster__name="demo", category=category)


def test_the_stuck_queue_shows_the_duration_at_the_page_time(client_in, later):
    f = _finding("claim_stuck_deallocating")
    assert "deleting for 47 min" in f.summary  # as the analysis wrote it
    html = client_in.get(reverse("claims:stuck"), {"category": "claim_stuck_deallocating"}).content.decode()
    row = html.split(f"?finding={f.pk}")[1].split("</tr>")[0]
    assert "deleting for 51 min" in row and "47 min" not in row
    assert re.search(r'data-label="Stuck for">51 min<', row)


def test_the_claim_page_agrees_with_itself(client_in, later):
    f = _finding("claim_stuck_deallocating")
    c = f.claim
    html = client_in.get(reverse("claims:claim", args=["demo", c.namespace, c.name])).content.decode()
    # The history table keeps what the finding said when each transition was observed (dated).
    now_part = html.split("<h3>History</h3>")[0]
    assert "47 min" not in now_part
    assert "deleting for 51 min" in now_part and "for 51 min</span>" in now_part and "(51 min ago)" in now_part


def test_the_runbook_of_the_finding_says_the_same(client_in, later):
    f = _finding("claim_stuck_deallocating")
    html = client_in.get(reverse("claims:runbook", args=[f.category]), {"finding": f.pk}).content.decode()
    assert "deleting for 51 min" in html and "47 min" not in html


def test_events_are_shown_as_ages_with_their_time_in_the_title(client_in, later):
    f = _finding("allocated_not_reserved")
    c = f.claim
    html = client_in.get(reverse("claims:claim", args=["demo", c.namespace, c.name])).content.decode()
    events = html.split("Events about this claim")[1].split("</table>")[0]
    # The bind failure was 24 min 50 s before the analysis: 29 min at the page's time.
    assert re.search(r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">29 min ago</time>', events), events[:2000]


def test_a_summary_without_the_duration_is_left_as_written():
    from claims.templatetags.findings import live_summary

    f = Finding(summary="node gpu-h200-05 has GPU labels and no ResourceSlice", since=None, last_seen=timezone.now())
    assert live_summary(f, timezone.now()) == f.summary


def test_only_the_whole_phrase_is_replaced():
    from claims.templatetags.findings import _replace_phrase

    assert _replace_phrase("for 7 min, 17 min, 7 mint, 7 min", "7 min", "9 min") == "for 9 min, 17 min, 7 mint, 9 min"


def test_node_events_are_aged_to_the_snapshot_clock_not_the_wall_clock(client_in, tmp_path, monkeypatch):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    wall = timezone.now() + timedelta(hours=2)  # read two hours after the snapshot was taken
    monkeypatch.setattr(timezone, "now", lambda: wall)
    html = client_in.get(reverse("inventory:node", args=["demo", "gpu-h200-04"])).content.decode()
    events = html.split("Recent events about this node")[1].split("</table>")[0]
    # NodeNotSchedulable was 24 min 57 s before the snapshot's own time.
    assert re.search(r"<time [^>]+>24 min ago</time>", events), events[:1500]
    assert "2 h" not in events
