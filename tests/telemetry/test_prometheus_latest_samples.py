"""latest_samples reads the backfilled real H100 scrape from a real Prometheus."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from inventory.dcgm import join_samples, parse_exposition
from inventory.prometheus import latest_samples
from tests.fixtures.prometheus.build_fixtures import H100_AT, H200_START
from tests.telemetry.realdata import H100_SCRAPE

AT = datetime.fromtimestamp(H100_AT, tz=UTC)


def _key(s):
    return (s.field, s.uuid)


def test_at_the_scrape_time_prometheus_returns_the_h100_values_with_pod_labels(prometheus_url):
    got = latest_samples(prometheus_url, at=AT)
    want = parse_exposition(H100_SCRAPE.read_text())
    assert sorted((_key(s), s.value) for s in got) == sorted((_key(s), s.value) for s in want)
    assert {s.timestamp for s in got} == {H100_AT}
    pods = {(s.uuid, s.namespace, s.pod, s.container) for s in got if s.pod}
    assert pods == {(s.uuid, s.namespace, s.pod, s.container) for s in want if s.pod} != set()


def test_samples_from_prometheus_join_like_the_scrape(prometheus_url, h100_devices):
    joined = join_samples(latest_samples(prometheus_url, at=AT), h100_devices)
    direct = join_samples(parse_exposition(H100_SCRAPE.read_text()), h100_devices)
    assert {k: (t.values, t.pod) for k, t in joined.by_device.items()} == {
        k: (t.values, t.pod) for k, t in direct.by_device.items()
    }
    assert {t.at for t in joined.by_device.values()} == {"2026-03-10T03:41:29.184Z"}


def test_outside_the_five_minute_lookback_the_instant_query_finds_nothing(prometheus_url):
    assert latest_samples(prometheus_url, at=AT + timedelta(minutes=6)) == []
    assert latest_samples(prometheus_url, at=AT + timedelta(minutes=4))


def test_fields_and_label_matchers_narrow_the_query(prometheus_url):
    got = latest_samples(prometheus_url, ["DCGM_FI_DEV_GPU_TEMP"], at=AT, matchers={"Hostname": "gpu-node-1"})
    assert {s.field for s in got} == {"DCGM_FI_DEV_GPU_TEMP"} and len(got) == 8
    assert latest_samples(prometheus_url, at=AT, matchers={"Hostname": "gpu-node-2"}) == []


def test_a_label_value_with_promql_in_it_is_matched_literally(prometheus_url):
    hostile = 'gpu-node-1"} or vector(1) or {Hostname="x'
    assert latest_samples(prometheus_url, at=AT, matchers={"Hostname": hostile}) == []
    assert latest_samples(prometheus_url, at=AT, matchers={"Hostname": 'a\\"b\nc'}) == []


def test_the_new_lower_case_hostname_label_of_the_h200_series_is_read(prometheus_url):
    at = datetime.fromtimestamp(H200_START + 20, tz=UTC)
    got = latest_samples(prometheus_url, ["DCGM_FI_DEV_GPU_UTIL"], at=at)
    assert [(s.hostname, s.uuid) for s in got] == [("h200-node-1", "GPU-3c1e9a52-7b04-4d2e-9a61-5f08c2d7e4b9")]
    assert "Hostname" not in got[0].labels
