"""Measured (Prometheus ``avg_over_time``) and estimated (latest stored value) GPU-hours are
totalled apart on the allocated-but-idle page: the real aicr H100 slices and scrape behind a
real Prometheus, with the real vks claim moved onto gpu-node-1's gpu-0 and allocated two hours
before the scrape, next to the real vks-a100 snapshot (slices, claim, scrape; no Prometheus)."""

from __future__ import annotations

import copy
import shutil
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from django.urls import reverse

from inventory.models import Cluster
from tests.fixtures.prometheus.build_fixtures import H100_AT
from tests.telemetry.realdata import FIXTURES, H100_SCRAPE, H100_SLICES, VGPU_PAGE

pytestmark = pytest.mark.django_db
VKS_SLICES = FIXTURES / "k8s" / "resourceslices" / "vks-2x-grid-a100-10c-vgpu-gpu-slices.v1.yaml"
VKS_CLAIM = FIXTURES / "k8s" / "claims-with-status" / "vks-resourceclaim-allocated-reserved.v1.yaml"
AT = datetime.fromtimestamp(H100_AT, tz=UTC)


def _claim_on_gpu_node_1(folder):
    """The vks claim, its one allocation result moved to the aicr pool gpu-node-1, gpu-0."""
    doc = copy.deepcopy(yaml.safe_load(VKS_CLAIM.read_text()))
    claim = doc["items"][0]
    when = (AT - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim["metadata"]["creationTimestamp"] = claim["status"]["allocation"]["allocationTimestamp"] = when
    result = claim["status"]["allocation"]["devices"]["results"][0]
    result["pool"], result["device"] = "gpu-node-1", "gpu-0"
    claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["gpu-node-1"]
    (folder / "claim.yaml").write_text(yaml.safe_dump(doc))


@pytest.fixture
def clusters(sync_snapshot, prometheus_url, tmp_path):
    aicr, vks = tmp_path / "aicr", tmp_path / "vks"
    for folder, files in ((aicr, (H100_SLICES, H100_SCRAPE)), (vks, (VKS_SLICES, VKS_CLAIM, VGPU_PAGE))):
        folder.mkdir()
        for f in files:
            shutil.copy(f, folder / f.name)
    _claim_on_gpu_node_1(aicr)
    sync_snapshot(aicr, name="aicr")
    sync_snapshot(vks, name="vks")
    Cluster.objects.filter(name="aicr").update(prometheus_url=prometheus_url)


def test_measured_and_estimated_gpu_hours_have_their_own_totals(client_in, clusters):
    resp = client_in.get(reverse("inventory:telemetry-idle"), {"window": "1h", "end": AT.isoformat()})
    ctx, html = resp.context, resp.content.decode()
    rows = {r["cluster"]: r for g in ctx["groups"] for r in g["rows"]}
    assert set(rows) == {"aicr", "vks"} and not ctx["errors"]
    measured, estimate = rows["aicr"], rows["vks"]
    assert measured["basis"] == "measured" and measured["device"].name == "gpu-0" and measured["util"] < 5
    assert estimate["basis"] == "estimate"
    assert ctx["measured_count"] == ctx["estimated_count"] == 1
    assert ctx["measured_gpu_hours"] == pytest.approx(measured["gpu_hours"]) and 0 < measured["gpu_hours"] <= 1
    # The vks claim was allocated at its snapshot's moment, which its scrape (no sample times)
    # is dated at: held for no time yet, so nothing estimated is wasted (dated at the load it
    # was a whole window's worth).
    assert estimate["device"].metrics_at == estimate["claim"].allocated_at
    assert ctx["estimated_gpu_hours"] == estimate["gpu_hours"] == 0
    assert "GPU-hours wasted, measured" in html and "GPU-hours wasted, estimated" in html
    assert "measured</span>" in html and "estimate</span>" in html
