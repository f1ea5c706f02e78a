"""A snapshot cluster without Prometheus charts the range-query answers its snapshot carried:
the device and node charts read them, end at the newest recorded point, and a snapshot without
them takes them away again."""

from __future__ import annotations

import csv
import json
import urllib.parse
import urllib.request
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory.charts import step_seconds
from inventory.models import Cluster, Device, RecordedSeries
from tests.fixtures.prometheus.build_fixtures import H200_START
from tests.telemetry.pagedata import PARTIAL_CHROME, h200_range_answer, h200_slice_folder
from tests.telemetry.realdata import H200_CSV

pytestmark = pytest.mark.django_db


def _traces(resp):
    assert resp.status_code == 200, resp.content[:300]
    return {t["name"]: t for t in json.loads(resp.content)["data"]}


@pytest.fixture
def recorded(sync_snapshot, tmp_path):
    folder = h200_slice_folder(tmp_path / "h200")
    (folder / "h200-history.range.json").write_text(json.dumps(h200_range_answer()))
    run = sync_snapshot(folder, name="h200-recorded")
    assert run.error == ""
    return folder


def test_the_device_chart_draws_the_recorded_load_without_a_prometheus(client_in, recorded, django_assert_max_num_queries):
    device = Device.objects.get(cluster__name="h200-recorded", type="gpu")
    assert Cluster.objects.get(name="h200-recorded").prometheus_url == ""
    url = reverse("inventory:telemetry-device-chart-json", args=[device.pk])
    with django_assert_max_num_queries(5 + PARTIAL_CHROME):
        traces = _traces(client_in.get(url, {"window": "1h"}))  # no ?end=: the recording's own end
    util = next(t for n, t in traces.items() if "DCGM_FI_DEV_GPU_UTIL" in n)
    power = next(t for n, t in traces.items() if "DCGM_FI_DEV_POWER_USAGE" in n)
    assert max(util["y"]) >= 95 and min(util["y"]) == 0
    assert 680 <= max(power["y"]) <= 700
    # The window ends at the newest recorded reading of the trace, not at today.
    with H200_CSV.open(newline="") as f:
        newest = max(float(r["t_s"]) for r in csv.DictReader(f))
    assert datetime.fromisoformat(util["x"][-1]) == datetime.fromtimestamp(H200_START + newest, tz=UTC)


def test_the_node_chart_reads_the_same_recording(client_in, recorded):
    url = reverse("inventory:telemetry-node-chart-json", args=["h200-recorded", "h200-node-1"])
    traces = json.loads(client_in.get(url).content)["data"]
    assert traces and max(max(y for y in t["y"] if y is not None) for t in traces) >= 95


def test_the_panels_say_the_history_is_recorded_and_offer_the_chart(client_in, recorded):
    device = Device.objects.get(cluster__name="h200-recorded", type="gpu")
    body = client_in.get(reverse("inventory:telemetry-device", args=[device.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Recorded history" in body and 'hx-trigger="intersect once"' in body
    node = client_in.get(reverse("inventory:telemetry-node", args=["h200-recorded", "h200-node-1"]), HTTP_HX_REQUEST="true").content.decode()
    assert "Recorded history" in node and reverse("inventory:telemetry-node-chart", args=["h200-recorded", "h200-node-1"]) in node


def test_the_telemetry_index_says_the_charts_come_from_the_recording(client_in, recorded):
    html = client_in.get(reverse("inventory:telemetry")).content.decode()
    n = RecordedSeries.objects.filter(cluster__name="h200-recorded").count()
    assert f"charts from its recorded history: {n} series" in html


def test_a_window_before_the_recording_is_an_empty_chart(client_in, recorded):
    device = Device.objects.get(cluster__name="h200-recorded", type="gpu")
    resp = client_in.get(reverse("inventory:telemetry-device-chart", args=[device.pk]), {"end": "2020-01-01T00:00:00Z"})
    assert "The recorded history has no series for this device" in resp.content.decode()


def test_a_snapshot_without_range_files_takes_the_recording_away(client_in, recorded, sync_snapshot):
    assert RecordedSeries.objects.filter(cluster__name="h200-recorded").count() == len(h200_range_answer()["data"]["result"])
    (recorded / "h200-history.range.json").unlink()
    sync_snapshot(recorded, name="h200-recorded")
    assert not RecordedSeries.objects.filter(cluster__name="h200-recorded").exists()
    device = Device.objects.get(cluster__name="h200-recorded", type="gpu")
    body = client_in.get(reverse("inventory:telemetry-device", args=[device.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Charts need Prometheus or recorded history" in body
    chart = client_in.get(reverse("inventory:telemetry-device-chart", args=[device.pk])).content.decode()
    assert "No chart: no Prometheus configured for this cluster, and its snapshot recorded no history" in chart


def test_an_answer_saved_from_a_real_prometheus_charts_as_prometheus_itself_does(client_in, sync_snapshot, tmp_path, prometheus_url):
    """The body of a real /api/v1/query_range (the window and step the chart asks for), saved as
    a file, gives the chart the live query gives."""
    end = H200_START + 41
    query = urllib.parse.urlencode({"query": '{__name__=~"DCGM_FI_.*",hostname="h200-node-1"}', "start": end - 3600, "end": end, "step": step_seconds(3600)})
    with urllib.request.urlopen(f"{prometheus_url}/api/v1/query_range?{query}", timeout=10) as r:  # loopback test server
        body = r.read()
    folder = h200_slice_folder(tmp_path / "saved")
    (folder / "saved.range.json").write_bytes(body)
    sync_snapshot(folder, name="saved")
    sync_snapshot(h200_slice_folder(tmp_path / "live"), name="live")
    Cluster.objects.filter(name="live").update(prometheus_url=prometheus_url)
    window = {"window": "1h", "end": datetime.fromtimestamp(end, tz=UTC).isoformat()}
    got = {}
    for name in ("saved", "live"):
        device = Device.objects.get(cluster__name=name, type="gpu")
        got[name] = _traces(client_in.get(reverse("inventory:telemetry-device-chart-json", args=[device.pk]), window))
    assert got["saved"].keys() == got["live"].keys() and got["saved"]
    for name, trace in got["live"].items():
        assert (got["saved"][name]["x"], got["saved"][name]["y"]) == (trace["x"], trace["y"]), name


def test_a_cluster_keeps_at_most_its_limit_of_recorded_series(sync_snapshot, tmp_path, monkeypatch):
    from inventory import telemetry

    monkeypatch.setattr(telemetry, "MAX_RECORDED_SERIES", 3)
    folder = h200_slice_folder(tmp_path / "many")
    (folder / "h200-history.range.json").write_text(json.dumps(h200_range_answer()))
    sync_snapshot(folder, name="many")
    assert RecordedSeries.objects.filter(cluster__name="many").count() == 3
    answer = h200_range_answer()
    assert telemetry.store_ranges(Cluster.objects.get(name="many"), {"x.range.json": [
        (e["metric"], [(t, float(v)) for t, v in e["values"]]) for e in answer["data"]["result"]
    ]}) == {"recorded_series": 3, "dropped_series": len(answer["data"]["result"]) - 3}


def test_a_resync_of_the_same_recording_writes_nothing(recorded, sync_snapshot):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    before = list(RecordedSeries.objects.filter(cluster__name="h200-recorded").values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as q:
        sync_snapshot(recorded, name="h200-recorded")
    writes = [x["sql"] for x in q.captured_queries if "inventory_recordedseries" in x["sql"] and not x["sql"].lstrip().upper().startswith("SELECT")]
    assert writes == []
    assert list(RecordedSeries.objects.filter(cluster__name="h200-recorded").values_list("pk", flat=True)) == before
