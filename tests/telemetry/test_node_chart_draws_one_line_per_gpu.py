"""The pure node figure: the real H100 scrape's series of gpu-node-1 become one utilization line
(%) and one power line (W) per GPU, named after the slice devices; a MIG instance's graphics
engine activity is a line in percent named with its profile."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from inventory import charts
from inventory.dcgm import parse_exposition
from tests.fixtures.prometheus.build_fixtures import H100_AT
from tests.telemetry.realdata import A30_MIG, H100_SCRAPE
from tests.telemetry.test_join_mig_instances import A30_UUID, _a30_slice

START = datetime.fromtimestamp(H100_AT - 600, tz=UTC)
END = datetime.fromtimestamp(H100_AT + 60, tz=UTC)


def _series(text: str, at: float):
    """Exposition samples as range-query results: labels incl. ``__name__``, one point each."""
    return [({**s.labels, "__name__": s.field}, [(at, s.value)]) for s in parse_exposition(text)]


def _fig(series, devices):
    return json.loads(charts.node_figure(series, devices, start=START, end=END, title="gpu-node-1").to_json())


def test_every_gpu_of_the_node_gets_a_utilization_and_a_power_line_with_its_scrape_values(h100_devices):
    node = [d for d in h100_devices if d.node_name == "gpu-node-1" and d.driver == "gpu.nvidia.com" and d.uuid]
    samples = parse_exposition(H100_SCRAPE.read_text())
    fig = _fig(_series(H100_SCRAPE.read_text(), H100_AT), node)
    util = {t["name"]: t for t in fig["data"] if t["yaxis"] == "y"}
    power = {t["name"]: t for t in fig["data"] if t["yaxis"] == "y2"}
    scraped = {s.uuid for s in samples}
    assert set(util) == set(power) == {d.name for d in node if d.uuid in scraped} and len(util) == len(scraped) == 8
    for d in node:
        want_util = next(s.value for s in samples if s.uuid == d.uuid and s.field == charts.GPU_UTIL)
        want_power = next(s.value for s in samples if s.uuid == d.uuid and s.field == charts.POWER)
        assert util[d.name]["y"] == [want_util] and power[d.name]["y"] == [want_power]
        assert util[d.name]["line"]["color"] == power[d.name]["line"]["color"]
        assert "%" in util[d.name]["hovertemplate"] and "W" in power[d.name]["hovertemplate"]
    assert fig["layout"]["yaxis"]["title"]["text"] == "%" and fig["layout"]["yaxis2"]["title"]["text"] == "W"
    assert sum(1 for t in fig["data"] if t.get("showlegend") is not False) == 8  # one legend entry per GPU


def test_series_of_gpus_not_on_the_node_are_left_out(h100_devices):
    one = [d for d in h100_devices if d.node_name == "gpu-node-1" and d.name == "gpu-0"]
    fig = _fig(_series(H100_SCRAPE.read_text(), H100_AT), one)
    assert {t["name"] for t in fig["data"]} == {"gpu-0"} and len(fig["data"]) == 2


def test_a_mig_instance_is_a_line_of_graphics_engine_activity_in_percent_named_with_its_profile():
    (mig,) = _a30_slice([0])
    want = next(s.value for s in parse_exposition(A30_MIG.read_text()) if s.field == charts.GR_ACTIVE)
    fig = _fig(_series(A30_MIG.read_text(), H100_AT), [mig])
    (line,) = fig["data"]
    assert line["name"] == f"{mig.name} (2g.12gb)" and line["y"] == [want * 100]
    assert "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in line["hovertemplate"] and mig.parent_uuid == A30_UUID


def test_the_power_of_a_gpu_in_mig_mode_is_drawn_under_its_exporter_index():
    (mig,) = _a30_slice([0])
    line = next(x for x in A30_MIG.read_text().splitlines() if x.startswith(charts.GR_ACTIVE))
    # The A30 excerpt carries no power: the parent GPU's series as dcgm-exporter writes it
    # (no GPU_I_ID / GPU_I_PROFILE), built from the excerpt's own labels.
    power = line.split("{")[0].replace(charts.GR_ACTIVE, charts.POWER) + "{" + line.split("{")[1]
    power = power.replace('GPU_I_PROFILE="2g.12gb",GPU_I_ID="1",', "").rsplit(" ", 1)[0] + " 61.5\n"
    fig = _fig(_series(power, H100_AT), [mig])
    (trace,) = fig["data"]
    assert trace["name"] == "GPU 0 (MIG mode)" and trace["y"] == [61.5] and trace["yaxis"] == "y2"


def test_no_series_gives_both_empty_axes():
    fig = _fig([], [])
    assert fig["data"] == [] and fig["layout"]["yaxis"]["range"] == [0, 105] and "yaxis2" in fig["layout"]
