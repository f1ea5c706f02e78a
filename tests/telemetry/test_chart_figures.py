"""Pure figure building: window steps, XID markers, MIG utilization in percent, heat colours."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from inventory import charts, dcgm

T0 = datetime(2026, 11, 30, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 1, tzinfo=UTC)


def test_every_window_stays_far_below_the_prometheus_points_limit():
    for name, seconds in charts.WINDOWS.items():
        assert seconds / charts.step_seconds(seconds) <= 11_000, name
    assert charts.window_seconds("bogus") == ("1h", 3600)


def test_an_xid_code_is_one_marker_until_it_changes():
    points = [(0.0, 0.0), (5.0, 79.0), (10.0, 79.0), (15.0, 0.0), (20.0, 48.0)]
    assert charts.xid_events(points) == [(5.0, 79), (20.0, 48)]
    fig = json.loads(charts.device_figure([({"__name__": charts.XID}, points)], start=T0, end=T1).to_json())
    (marks,) = [t for t in fig["data"] if "XID" in t["name"]]
    assert marks["text"] == ["XID 79", "XID 48"]


def test_mig_graphics_engine_activity_is_charted_in_percent():
    fig = json.loads(charts.device_figure([({"__name__": charts.GR_ACTIVE}, [(1.0, 0.381124)])], start=T0, end=T1).to_json())
    assert fig["data"][0]["y"] == [38.1124]
    assert dcgm.utilization_percent({dcgm.GR_ACTIVE: 0.5}) == 50.0
    assert dcgm.utilization_percent({}) is None


def test_heat_colours_run_from_pale_green_to_red_and_grey_without_data():
    assert charts.heat_colour(None) == "#e5e7eb"
    assert charts.heat_colour(0) == "hsl(130,70%,88%)" and charts.heat_colour(100) == "hsl(0,70%,48%)"
    assert charts.heat_colour(250) == charts.heat_colour(100)
