"""A snapshot's ``*.range.json`` files (Prometheus query_range answers) are read as DCGM
series, within bounds, and every damaged file is a named problem while the rest loads."""

from __future__ import annotations

import csv
import json
import math
import shutil

import pytest

from inventory import snapshot, telemetry_range
from tests.telemetry.pagedata import H200_UUID, h200_range_answer, h200_slice_folder
from tests.telemetry.realdata import H100_QUERY_GPU_UTIL, H200_CSV


def _folder(tmp_path, answer, name="h200.range.json"):
    folder = h200_slice_folder(tmp_path / "snap")
    (folder / name).write_text(json.dumps(answer) if not isinstance(answer, str) else answer)
    return folder


def test_the_series_of_a_range_answer_arrive_with_every_reading_of_the_trace(tmp_path):
    load = snapshot.load_path(_folder(tmp_path, h200_range_answer()))
    assert load.errors == []
    series = load.ranges["h200.range.json"]
    util = next(points for labels, points in series if labels["__name__"] == "DCGM_FI_DEV_GPU_UTIL")
    with H200_CSV.open(newline="") as f:
        want = [float(r["gpu_util_pct"]) for r in csv.DictReader(f)]
    assert [v for _, v in util] == want
    assert all(labels["UUID"] == H200_UUID for labels, _ in series)
    # The slice still loads beside it, and the range file is not taken for an object file.
    assert load.kinds()["ResourceSlice"] == 1


def test_an_instant_query_answer_is_refused_by_name(tmp_path):
    folder = h200_slice_folder(tmp_path / "snap")
    shutil.copy(H100_QUERY_GPU_UTIL, folder / "gpu-util.range.json")
    load = snapshot.load_path(folder)
    assert "gpu-util.range.json" not in load.ranges
    assert any(e.startswith("gpu-util.range.json:") and "matrix" in e for e in load.errors)
    assert load.kinds()["ResourceSlice"] == 1


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"status":"error","errorType":"bad_data","error":"invalid parameter \\"query\\""}', "did not succeed"),
        ("{not json", "invalid JSON"),
        ("[1, 2]", "not an object"),
        ('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL"},"values":[[1,"x"]]}]}}', "malformed values"),
    ],
)
def test_a_damaged_range_file_is_a_named_problem(tmp_path, text, says):
    load = snapshot.load_path(_folder(tmp_path, text, "bad.range.json"))
    assert any(e.startswith("bad.range.json:") and says in e for e in load.errors), load.errors
    assert not load.ranges.get("bad.range.json")


def test_series_that_are_not_dcgm_fields_are_left_out_quietly(tmp_path):
    answer = h200_range_answer(("DCGM_FI_DEV_POWER_USAGE",))
    answer["data"]["result"].append({"metric": {"__name__": "up", "job": "dcgm"}, "values": [[1.0, "1"]]})
    load = snapshot.load_path(_folder(tmp_path, answer))
    assert [labels["__name__"] for labels, _ in load.ranges["h200.range.json"]] == ["DCGM_FI_DEV_POWER_USAGE"]
    assert load.errors == []


def test_points_beyond_the_limit_keep_the_newest(tmp_path, monkeypatch):
    monkeypatch.setattr(telemetry_range, "MAX_POINTS", 10)
    load = snapshot.load_path(_folder(tmp_path, h200_range_answer(("DCGM_FI_DEV_GPU_TEMP",))))
    ((_labels, points),) = load.ranges["h200.range.json"]
    assert len(points) == 10 and points[-1][0] == max(t for t, _ in points)
    assert any("over 10" in e for e in load.errors)


def test_series_beyond_the_limit_are_cut_with_a_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(telemetry_range, "MAX_SERIES", 2)
    load = snapshot.load_path(_folder(tmp_path, h200_range_answer()))
    assert len(load.ranges["h200.range.json"]) == 2
    assert any("over the limit of 2" in e for e in load.errors)


def test_a_range_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(telemetry_range, "MAX_FILE_BYTES", 1000)
    load = snapshot.load_path(_folder(tmp_path, h200_range_answer()))
    assert "h200.range.json" not in load.ranges
    assert any(e.startswith("h200.range.json:") and "not read" in e for e in load.errors)


def test_a_folder_with_only_a_range_file_is_a_snapshot(tmp_path):
    folder = tmp_path / "only"
    folder.mkdir()
    (folder / "h200.range.json").write_text(json.dumps(h200_range_answer(("DCGM_FI_DEV_GPU_UTIL",))))
    assert snapshot.load_path(folder).ranges


def test_nan_gaps_survive_storage_as_null():
    points = [(1.0, 2.0), (2.0, math.nan), (3.0, math.inf)]
    back = telemetry_range.from_json_points(json.loads(json.dumps(telemetry_range.to_json_points(points))))
    assert back[0] == (1.0, 2.0) and math.isnan(back[1][1]) and math.isnan(back[2][1])
