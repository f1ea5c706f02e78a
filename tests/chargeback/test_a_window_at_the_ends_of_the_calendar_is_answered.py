"""A window reaching the ends of the calendar (typed by hand, or a cluster whose clock a bad
timestamp moved) is answered: a report whose trend has a bounded number of buckets, or a 400
naming the problem; never a 500 from date arithmetic past year 9999 or before year 1."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from chargeback_helpers import CASES, load_case
from django.core.management import CommandError, call_command

from claims import chargeback as cb
from claims.chargeback_data import window
from inventory.kube import parse_time


def test_a_window_to_year_9999_has_a_bounded_trend_and_counts_the_held_hours():
    claims, devices, now = load_case("capacity-exhausted-all-gpus-allocated")
    held = []
    for c in claims:
        got, _ = cb.claim_holdings("c", c, devices, parse_time(c.allocation_timestamp))
        held.extend(got)
    until = datetime(9999, 12, 31, tzinfo=UTC)
    report = cb.summarize(held, now, until)
    edges = {t for t, _, _ in report.trend}
    assert 1 < len(edges) <= cb.MAX_BUCKETS + 1
    total = sum(n["gpu_hours"] for n in report.namespaces())
    assert total == pytest.approx(sum((until - now).total_seconds() / 3600 * h.share for h in held if h.end is None))


@pytest.mark.parametrize("until", [datetime(9999, 12, 31, 23, 59, tzinfo=UTC), datetime(9999, 12, 25, tzinfo=UTC)])
def test_the_last_bucket_never_steps_past_the_calendar(until):
    report = cb.summarize([], datetime(2026, 11, 1, tzinfo=UTC), until)
    assert report.namespaces() == []


def test_a_window_starting_before_year_one_is_a_clear_error():
    with pytest.raises(ValueError, match="before the year 1"):
        window([], None, "0001-01-02T00:00:00Z", "7d")


@pytest.mark.django_db
def test_the_api_and_the_command_answer_a_window_to_9999(client_in, sync_snapshot):
    sync_snapshot(CASES / "healthy-cluster-h100" / "snapshot", "h100")
    resp = client_in.get("/api/claims/chargeback/", {"since": "2026-11-01T00:00:00Z", "until": "9999-12-31T00:00:00Z"})
    assert resp.status_code == 200, resp.content[:300]
    assert resp.json()["namespaces"]
    resp = client_in.get("/api/claims/chargeback/", {"until": "0001-01-02T00:00:00Z"})
    assert resp.status_code == 400
    with pytest.raises(CommandError):
        call_command("chargeback", "--cluster", "h100", "--until", "0001-01-02T00:00:00Z")


@pytest.mark.parametrize(("since", "until"), [("2026-01-01", "9999-12-31T23:59:59-05:00"),
                                              ("0001-01-01T00:00:00+01:00", "2026-01-01")])
def test_a_moment_past_the_calendar_in_utc_is_a_clear_error(since, until):
    with pytest.raises(ValueError, match="outside the years 1 to 9999"):
        window([], since, until, None)
