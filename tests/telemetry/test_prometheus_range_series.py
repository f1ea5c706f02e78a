"""range_series over the backfilled real H200 load shows idle, the load plateau, idle."""

from __future__ import annotations

import csv
from datetime import UTC, datetime

from inventory.prometheus import fields_selector, range_series
from tests.fixtures.prometheus.build_fixtures import H200_START
from tests.telemetry.realdata import H200_CSV

START = datetime.fromtimestamp(H200_START, tz=UTC)
END = datetime.fromtimestamp(H200_START + 41, tz=UTC)
H200 = {"UUID": "GPU-3c1e9a52-7b04-4d2e-9a61-5f08c2d7e4b9"}


def _one(url, field):
    ((labels, points),) = range_series(url, fields_selector([field], H200), START, END, 1)
    assert labels["__name__"] == field and labels["hostname"] == "h200-node-1"
    return points


def test_the_load_plateau_reaches_95_percent_and_650_watts_between_idle_periods(prometheus_url):
    util = _one(prometheus_url, "DCGM_FI_DEV_GPU_UTIL")
    power = _one(prometheus_url, "DCGM_FI_DEV_POWER_USAGE")
    assert len(util) == len(power) >= 40
    assert max(v for _, v in util) >= 95
    assert max(v for _, v in power) >= 650
    assert util[0][1] == 0 and util[-1][1] == 0
    assert power[0][1] < 150 and power[-1][1] < 150


def test_range_points_are_the_csv_values_at_each_step(prometheus_url):
    rows = [(H200_START + float(r["t_s"]), float(r["fb_used_mib"])) for r in csv.DictReader(H200_CSV.open())]
    for ts, value in _one(prometheus_url, "DCGM_FI_DEV_FB_USED"):
        # Prometheus takes the newest sample at or before each step.
        assert value == max((r for r in rows if r[0] <= ts), key=lambda r: r[0])[1]


def test_two_fields_in_one_query_come_back_as_two_series(prometheus_url):
    got = range_series(
        prometheus_url, fields_selector(["DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"], H200), START, END, "5s"
    )
    assert sorted(labels["__name__"] for labels, _ in got) == ["DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED"]
