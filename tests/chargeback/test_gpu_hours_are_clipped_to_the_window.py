"""GPU-hours run from the allocation until the release or the window's end, cut to the window;
a pending claim holds nothing (real-shaped claims of the stored cases)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from chargeback_helpers import load_case

from claims import chargeback as cb
from inventory.kube import parse_time


def _holdings(case: str):
    claims, devices, now = load_case(case)
    out = []
    for c in claims:
        got, _ = cb.claim_holdings("c", c, devices, parse_time(c.allocation_timestamp))
        out.extend(got)
    return claims, out, now


def test_a_pending_claim_counts_zero():
    claims, devices, _ = load_case("capacity-exhausted-all-gpus-allocated")
    pending = [c for c in claims if not c.allocated]
    assert pending
    for c in pending:
        assert cb.claim_holdings("c", c, devices, None) == ([], 0)


def test_claims_still_allocated_count_to_the_windows_end():
    claims, held, now = _holdings("capacity-exhausted-all-gpus-allocated")
    since = now - timedelta(days=3)
    report = cb.summarize(held, since, now)
    by_ns = {n["namespace"]: n for n in report.namespaces()}
    for ns in ("team-a", "team-b"):
        want = sum(
            len(c.results) * (now - parse_time(c.allocation_timestamp)).total_seconds() / 3600
            for c in claims if c.namespace == ns and c.allocated
        )
        assert by_ns[ns]["gpu_hours"] == pytest.approx(want, abs=1e-3)
    # The pending claim of team-b adds nothing: every holding of team-b is an allocated claim's.
    assert by_ns["team-b"]["products"][0]["claims"] == sum(1 for c in claims if c.namespace == "team-b" and c.allocated)


def test_a_window_that_starts_after_the_allocation_cuts_it():
    claims, held, now = _holdings("healthy-cluster-h100")
    since, until = now - timedelta(hours=2), now
    report = cb.summarize(held, since, until)
    devices = sum(len(c.results) for c in claims if parse_time(c.allocation_timestamp) <= since)
    later = [c for c in claims if parse_time(c.allocation_timestamp) > since]
    want = devices * 2 + sum(len(c.results) * (until - parse_time(c.allocation_timestamp)).total_seconds() / 3600 for c in later)
    assert sum(n["gpu_hours"] for n in report.namespaces()) == pytest.approx(want, abs=1e-3)
    assert sum(n["gpu_hours"] for n in report.namespaces()) <= 2 * sum(len(c.results) for c in claims)


def test_a_claim_released_inside_the_window_counts_until_its_release():
    _, held, _ = _holdings("healthy-cluster-h100")
    h = held[0]
    released = h.start + timedelta(minutes=90)
    one = [cb.Holding(**{**h.__dict__, "end": released})]
    report = cb.summarize(one, h.start - timedelta(hours=1), h.start + timedelta(days=1))
    assert report.namespaces()[0]["gpu_hours"] == pytest.approx(1.5 * h.share)


def test_a_window_before_the_allocation_counts_nothing():
    _, held, _ = _holdings("healthy-cluster-h100")
    first = min(h.start for h in held)
    report = cb.summarize(held, first - timedelta(days=2), first - timedelta(days=1))
    assert report.namespaces() == []


def test_an_empty_window_is_refused():
    _, held, now = _holdings("healthy-cluster-h100")
    with pytest.raises(ValueError):
        cb.summarize(held, now, now)


def test_the_trend_adds_up_to_the_totals():
    _, held, now = _holdings("healthy-cluster-h100")
    report = cb.summarize(held, now - timedelta(days=1), now)
    assert report.bucket == timedelta(hours=1)
    total = sum(n["gpu_hours"] for n in report.namespaces())
    assert sum(v for _, _, v in report.trend) == pytest.approx(total, abs=1e-3)
    assert all(report.since <= t < report.until for t, _, _ in report.trend)
