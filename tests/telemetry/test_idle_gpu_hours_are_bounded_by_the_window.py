"""The allocated-but-idle headline on the demo (its three snapshot clusters, the real vks-a100
claim allocated at its snapshot's moment among them): estimated GPU-hours never exceed the
window per device, a sample older than the window is "no recent data" and in no total, and
reloading later does not change the figures (snapshot values are measured against their
sample time, not the clock)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from inventory.charts import WINDOWS
from inventory.models import Cluster, Device

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())


def _page(client, **params):
    resp = client.get(reverse("inventory:telemetry-idle"), params)
    assert resp.status_code == 200
    return resp.context, resp.content.decode()


def _rows(ctx):
    return [r for g in ctx["groups"] for r in g["rows"]]


@pytest.mark.parametrize("window", ["1h", "24h", "7d"])
def test_estimated_gpu_hours_are_at_most_the_window_per_device(client_in, demo, window, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        ctx, html = _page(client_in, window=window)
    window_h = WINDOWS[window] / 3600
    rows = _rows(ctx)
    assert rows and all(r["basis"] == "estimate" for r in rows), "no Prometheus: every figure is an estimate"
    assert ctx["measured_gpu_hours"] == 0 and ctx["measured_count"] == 0
    assert ctx["estimated_count"] == len(rows)
    assert 0 < ctx["estimated_gpu_hours"] <= window_h * len(rows)
    assert ctx["estimated_gpu_hours"] == pytest.approx(sum(r["gpu_hours"] for r in rows))
    for r in rows:
        assert 0 <= r["gpu_hours"] <= r["hours"] <= window_h
        # A claim held since before the window starts counts the whole window, not its age.
        since = r["claim"].allocated_at or r["claim"].created
        held_to_sample = (r["device"].metrics_at - since).total_seconds() / 3600
        assert r["hours"] == pytest.approx(min(window_h, held_to_sample))
    if window != "7d":
        assert any(r["hours"] == window_h for r in rows), "the demo holds devices allocated before the window"
    # The real vks-a100 scrape carries no time: it is dated at its snapshot's moment (the
    # newest object timestamp, the diagnosis' clock), when its claim had just been allocated,
    # so that claim has held its GPU for no time yet (dated at the load it was "24 h").
    vks = [r for r in rows if r["cluster"] == "vks-a100"]
    assert vks and all(r["device"].metrics_at == r["claim"].allocated_at and r["gpu_hours"] == 0 for r in vks)
    assert "GPU-hours wasted, estimated" in html and "latest stored value, sample" in html


def test_a_sample_older_than_the_window_is_listed_as_no_recent_data_and_left_out_of_the_totals(client_in, demo):
    before, _ = _page(client_in)
    victim = max(_rows(before), key=lambda r: r["gpu_hours"])
    dev, cluster = victim["device"], Cluster.objects.get(name=victim["cluster"])
    Device.objects.filter(pk=dev.pk).update(metrics_at=cluster.metrics_at - timedelta(hours=30))

    ctx, html = _page(client_in)
    assert dev.pk not in {r["device"].pk for r in _rows(ctx)}
    assert [r["device"].pk for r in ctx["no_recent"]] == [dev.pk] and ctx["no_recent_count"] == 1
    assert ctx["estimated_gpu_hours"] == pytest.approx(before["estimated_gpu_hours"] - victim["gpu_hours"])
    assert ctx["estimated_count"] == before["estimated_count"] - 1 == ctx["idle_count"]
    assert "no recent data" in html and "1 d 6 h" in html

    # Over a 7 d window the same sample is recent again and is counted.
    week, _ = _page(client_in, window="7d")
    assert dev.pk in {r["device"].pk for r in _rows(week)} and not week["no_recent"]


def test_reloading_days_later_gives_the_same_figures(client_in, demo, monkeypatch):
    first, _ = _page(client_in)
    later = timezone.now() + timedelta(days=3)
    monkeypatch.setattr(timezone, "now", lambda: later)
    second, _ = _page(client_in)
    assert second["estimated_gpu_hours"] == first["estimated_gpu_hours"] > 0
    assert [(r["device"].pk, r["hours"]) for r in _rows(second)] == [(r["device"].pk, r["hours"]) for r in _rows(first)]
    assert second["no_recent_count"] == first["no_recent_count"] == 0
