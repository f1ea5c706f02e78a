"""Used GPU-hours are "measured" where the cluster's Prometheus answers: the real aicr H100
slices behind a real, backfilled Prometheus, with the real vks claim moved onto gpu-node-1's
gpu-0 and allocated two hours before the scrape (as the idle page's test does), the cluster
then read as live. Measured and estimated use stay apart."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from claims.chargeback_data import build_report
from inventory.models import Cluster, Device, SourceKind
from inventory.telemetry import average_utilization
from tests.conftest import H100_SLICES, VKS_CLAIM
from tests.fixtures.prometheus.build_fixtures import H100_AT
from tests.prometheus_server import PrometheusServer, prometheus_or_skip

AT = datetime.fromtimestamp(H100_AT, tz=UTC)
H100_SCRAPE = H100_SLICES.parents[2] / "dcgm" / "aicr-eks-h100-dcgm-exporter-sample.prom"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    server = prometheus_or_skip(tmp_path_factory.mktemp("prometheus"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def aicr(sync_snapshot, prometheus, tmp_path):
    for f in (H100_SLICES, H100_SCRAPE):
        shutil.copy(f, tmp_path / f.name)
    doc = copy.deepcopy(yaml.safe_load(VKS_CLAIM.read_text()))
    claim = doc["items"][0]
    when = (AT - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim["metadata"]["creationTimestamp"] = claim["status"]["allocation"]["allocationTimestamp"] = when
    result = claim["status"]["allocation"]["devices"]["results"][0]
    result["pool"], result["device"] = "gpu-node-1", "gpu-0"
    claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["gpu-node-1"]
    (tmp_path / "claim.yaml").write_text(yaml.safe_dump(doc))
    sync_snapshot(tmp_path, name="aicr")
    Cluster.objects.filter(name="aicr").update(prometheus_url=prometheus.url, source_kind=SourceKind.IN_CLUSTER)
    return Cluster.objects.get(name="aicr")


@pytest.mark.django_db
def test_prometheus_averages_give_measured_used_gpu_hours(aicr):
    since, until = AT - timedelta(hours=1), AT
    report, errors = build_report([aicr], since, until)
    assert errors == []
    (row,) = report.rows
    assert row.gpu_hours == pytest.approx(1.0)  # one whole H100, held the whole hour
    gpu0 = Device.objects.get(cluster=aicr, pool="gpu-node-1", name="gpu-0")
    avg = average_utilization(aicr, [gpu0], [], 3600, until)[gpu0.pk]
    assert row.hours_measured == pytest.approx(1.0) and row.hours_estimated == 0
    assert row.used_measured == pytest.approx(avg / 100) and row.used_estimated == 0
    assert row.idle_share == pytest.approx(1 - avg / 100)


@pytest.mark.django_db
@pytest.mark.parametrize(("sampled_before_end", "estimated"), [(timedelta(minutes=10), 1.0), (timedelta(days=2), 0.0)])
def test_without_an_answer_from_prometheus_a_stored_value_of_the_window_is_an_estimate(aicr, settings, sampled_before_end, estimated):
    """As a poll would have left it: gpu-0's latest value stored ``sampled_before_end`` before
    the window's end; Prometheus then unreachable."""
    Device.objects.filter(cluster=aicr, pool="gpu-node-1", name="gpu-0").update(metrics_at=AT - sampled_before_end)
    Cluster.objects.filter(pk=aicr.pk).update(prometheus_url="http://127.0.0.1:9/")
    aicr.refresh_from_db()
    settings.PROMETHEUS_TIMEOUT = 1.0
    report, errors = build_report([aicr], AT - timedelta(hours=1), AT)
    assert errors and "aicr" in errors[0]
    (row,) = report.rows
    assert row.used_measured == 0 and row.hours_measured == 0
    assert row.hours_estimated == pytest.approx(estimated)
    assert row.hours_unknown == pytest.approx(1.0 - estimated)
