"""Used GPU-hours from DCGM utilization, measured and estimated kept apart; the idle share;
cost from the price per product (else the ``*`` price, else none)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from chargeback_helpers import load_case

from claims import chargeback as cb
from inventory.kube import parse_time


def _held():
    claims, devices, now = load_case("healthy-cluster-h100")
    out = []
    for c in claims:
        out.extend(cb.claim_holdings("c", c, devices, parse_time(c.allocation_timestamp))[0])
    return out, now


def test_measured_and_estimated_use_are_totalled_apart():
    held, now = _held()
    a, b, *rest = held
    held = [replace(a, utilization=50.0, basis=cb.MEASURED), replace(b, utilization=10.0, basis=cb.ESTIMATE), *rest]
    since = now - timedelta(hours=1)
    report = cb.summarize(held, since, now)
    rows = [r for r in report.rows]
    measured = sum(r.used_measured for r in rows)
    estimated = sum(r.used_estimated for r in rows)
    ha = cb.held_seconds(a.start, a.end, since, now) / 3600 * a.share
    hb = cb.held_seconds(b.start, b.end, since, now) / 3600 * b.share
    assert measured == pytest.approx(0.5 * ha)
    assert estimated == pytest.approx(0.1 * hb)
    unknown = sum(r.hours_unknown for r in rows)
    assert unknown == pytest.approx(sum(r.gpu_hours for r in rows) - ha - hb)


def test_idle_share_is_over_the_hours_with_a_known_utilization():
    held, now = _held()
    h = replace(held[0], utilization=25.0, basis=cb.MEASURED)
    report = cb.summarize([h], now - timedelta(hours=1), now)
    assert report.rows[0].idle_share == pytest.approx(0.75)
    assert cb.summarize(held[:1], now - timedelta(hours=1), now).rows[0].idle_share is None


def test_cost_is_gpu_hours_times_the_products_price():
    held, now = _held()
    product = held[0].product
    since = now - timedelta(hours=1)
    report = cb.summarize(held, since, now, prices={product: "2.50"}, currency="EUR")
    for r in report.rows:
        assert r.cost == pytest.approx(r.gpu_hours * 2.5, abs=0.01)
    assert report.as_dict()["currency"] == "EUR"
    unpriced = cb.summarize(held, since, now, prices={"another product": 9})
    assert all(r.cost is None for r in unpriced.rows)
    default = cb.summarize(held, since, now, prices={"*": 1})
    assert all(r.cost == pytest.approx(r.gpu_hours, abs=0.01) for r in default.rows)


def test_the_team_comes_from_the_namespace_label_chosen():
    held, now = _held()
    labels = {"team-a": {"example.com/team": "search"}}
    report = cb.summarize(held, now - timedelta(hours=1), now, team_labels=labels, team_key="example.com/team")
    teams = {n["namespace"]: n["team"] for n in report.namespaces()}
    assert teams["team-a"] == "search" and teams["team-b"] == ""
    assert {t["team"] for t in report.teams()} == {"search", ""}
    no_key = cb.summarize(held, now - timedelta(hours=1), now, team_labels=labels, team_key="")
    assert {n["team"] for n in no_key.namespaces()} == {""}


def test_csv_rows_follow_the_columns():
    held, now = _held()
    report = cb.summarize(held, now - timedelta(hours=1), now)
    rows = cb.csv_rows(report)
    assert rows and all(len(r) == len(cb.CSV_COLUMNS) for r in rows)
    gi = cb.CSV_COLUMNS.index("gpu_hours")
    assert sum(r[gi] for r in rows) == pytest.approx(report.as_dict()["gpu_hours"], abs=1e-3)


def test_namespaces_without_the_label_take_their_team_from_the_settings_map():
    held, now = _held()
    labels = {"team-a": {"example.com/team": "search"}}
    teams = {"team-a": "ignored: the label wins", "team-b": "research"}
    report = cb.summarize(held, now - timedelta(hours=1), now, team_labels=labels, team_key="example.com/team", teams=teams)
    assert {n["namespace"]: n["team"] for n in report.namespaces()} == {"team-a": "search", "team-b": "research"}
