"""inventory.poll_metrics reads the published H100 scrape back from a real Prometheus and puts
each GPU's values, and the exporter's pod attribution, on the right slice device."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from inventory.dcgm import parse_exposition
from inventory.models import Cluster, Device
from inventory.tasks import dispatch_metric_polls, poll_metrics
from tests.fixtures.prometheus.build_fixtures import H100_AT
from tests.telemetry.pagedata import PAGE_CHROME
from tests.telemetry.realdata import H100_SCRAPE, H100_SLICES

pytestmark = pytest.mark.django_db
AT = datetime.fromtimestamp(H100_AT, tz=UTC).isoformat()


@pytest.fixture
def aicr(sync_snapshot, prometheus_url):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    Cluster.objects.filter(name="aicr").update(prometheus_url=prometheus_url)
    return Cluster.objects.get(name="aicr")


def test_the_poll_puts_the_scrape_utilization_and_pod_on_the_gpus_of_gpu_node_1(aicr):
    got = poll_metrics.apply(args=[aicr.pk], kwargs={"at": AT}).get()
    samples = parse_exposition(H100_SCRAPE.read_text())
    with_pod = [s for s in samples if s.pod and s.field == "DCGM_FI_DEV_GPU_UTIL"]
    assert with_pod, "the real scrape attributes a GPU to a pod"
    s = with_pod[0]
    dev = Device.objects.get(cluster=aicr, uuid=s.uuid)
    assert dev.metrics["DCGM_FI_DEV_GPU_UTIL"] == s.value
    assert dev.metrics_pod == f"{s.namespace}/{s.pod}"
    assert dev.metrics_at == datetime.fromtimestamp(H100_AT, tz=UTC)
    with_values = Device.objects.filter(cluster=aicr).exclude(metrics={})
    assert got["matched_devices"] == with_values.count() == len({x.uuid for x in samples})
    assert set(with_values.values_list("node_name", flat=True)) == {"gpu-node-1"}
    aicr.refresh_from_db()
    assert aicr.metrics_error == "" and aicr.metrics_at == dev.metrics_at


def test_the_node_panel_shows_the_pod_next_to_its_gpu_with_units(client_in, aicr, django_assert_max_num_queries):
    poll_metrics.apply(args=[aicr.pk], kwargs={"at": AT}).get()
    dev = Device.objects.exclude(metrics_pod="").get(cluster=aicr)
    with django_assert_max_num_queries(2 + PAGE_CHROME):
        html = client_in.get(reverse("inventory:telemetry-node", args=["aicr", "gpu-node-1"])).content.decode()
    assert dev.metrics_pod in html and "°C" in html and " W<" in html and " %" in html
    # Prometheus is configured and the fixture time is long past: the values are stale.
    assert "metrics stale since" in html


def test_the_dispatcher_polls_only_clusters_with_a_prometheus(aicr, sync_snapshot, tmp_path, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"  # global URL: not used for snapshot clusters
    sync_snapshot(H100_SLICES, name="snapshot-only", hooks=False)
    assert dispatch_metric_polls.apply().get() == 1
    assert Cluster.objects.get(name="snapshot-only").metrics_error == ""
