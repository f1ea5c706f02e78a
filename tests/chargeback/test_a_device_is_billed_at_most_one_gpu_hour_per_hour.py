"""Holders of one device whose shares add up to more than one GPU at the same time (two
sharers' largest ratios of different capacities; an exclusive GPU allocated to two claims)
are scaled down in proportion for that stretch: the device is billed at most one GPU-hour per
hour. Holders that fit within one GPU, and other devices, are counted as they are."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from chargeback_helpers import claim, load_case

from claims import chargeback as cb

HOUR = timedelta(hours=1)
NOW = datetime(2026, 11, 20, tzinfo=UTC)


def _gpu_holding():
    claims, devices, _ = load_case("mig-and-full-gpu-both-advertised")
    held, _ = cb.claim_holdings("c", claim(claims, "all-gpus"), devices, None)
    return held[0], held[1], NOW


def _total(report) -> float:
    return sum(n["gpu_hours"] for n in report.namespaces())


def test_two_claims_on_one_gpu_for_the_whole_window_bill_ten_hours_not_twelve():
    gpu, _, now = _gpu_holding()
    since = now - 10 * HOUR
    a = replace(gpu, claim="a", claim_uid="a", namespace="team-a", share=1.0, start=since, end=None)
    b = replace(gpu, claim="b", claim_uid="b", namespace="team-b", share=0.2, start=since, end=None)
    report = cb.summarize([a, b], since, now)
    assert _total(report) == pytest.approx(10.0, abs=1e-3)
    by_ns = {n["namespace"]: n["gpu_hours"] for n in report.namespaces()}
    assert by_ns == pytest.approx({"team-a": 10 / 1.2, "team-b": 2 / 1.2}, abs=1e-4)  # reports round to 4 places


def test_only_the_stretch_held_together_is_scaled():
    gpu, _, now = _gpu_holding()
    since = now - 10 * HOUR
    a = replace(gpu, claim="a", claim_uid="a", namespace="team-a", share=1.0, start=since, end=None)
    b = replace(gpu, claim="b", claim_uid="b", namespace="team-b", share=0.2, start=since + 5 * HOUR, end=None)
    by_ns = {n["namespace"]: n["gpu_hours"] for n in cb.summarize([a, b], since, now).namespaces()}
    assert by_ns == pytest.approx({"team-a": 5 + 5 / 1.2, "team-b": 1 / 1.2}, abs=1e-4)
    assert sum(by_ns.values()) == pytest.approx(10.0, abs=1e-3)


def test_holders_within_one_gpu_and_other_devices_are_counted_as_they_are():
    gpu, other, now = _gpu_holding()
    since = now - 10 * HOUR
    a = replace(gpu, claim="a", claim_uid="a", share=0.5, start=since, end=None)
    b = replace(gpu, claim="b", claim_uid="b", share=0.5, start=since, end=None)
    c = replace(other, claim="c", claim_uid="c", share=1.0, start=since, end=None)
    assert cb.capped_per_device([a, b, c], since, now) == [(h, [(h.start, h.end, h.share)]) for h in (a, b, c)]
    assert _total(cb.summarize([a, b, c], since, now)) == pytest.approx(20.0)


def test_no_trend_bucket_bills_one_gpu_for_more_than_an_hour_an_hour():
    """A held the GPU for ten hours, B beside it in the first hour only: the first hour is
    split between them, the other nine are A's alone."""
    gpu, _, now = _gpu_holding()
    since = now - 10 * HOUR
    a = replace(gpu, claim="a", claim_uid="a", namespace="team-a", share=1.0, start=since, end=None)
    b = replace(gpu, claim="b", claim_uid="b", namespace="team-b", share=1.0, start=since, end=since + HOUR)
    report = cb.summarize([a, b], since, now)
    per_bucket: dict = {}
    for edge, ns, hours in report.trend:
        per_bucket.setdefault(edge, {})[ns] = hours
    assert per_bucket[since] == pytest.approx({"team-a": 0.5, "team-b": 0.5})
    assert all(v == pytest.approx({"team-a": 1.0}) for e, v in per_bucket.items() if e != since)
    assert len(per_bucket) == 10
