"""Node names are unique within a cluster only: gpu-node-1 of one cluster and gpu-node-1 of
another are two machines. The overview counts them apart and the node list's driver filter
matches a node's devices in its own cluster only."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from inventory import queries
from tests.conftest import H100_SLICES, write_list

pytestmark = pytest.mark.django_db
COMPUTE_DOMAIN = "compute-domain.nvidia.com"


def test_the_overview_counts_the_other_drivers_nodes_per_cluster(sync_snapshot):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    [one] = queries.device_aggregates(None)["other_drivers"]
    assert (one["driver"], one["devices"], one["nodes"]) == (COMPUTE_DOMAIN, 4, 2)
    sync_snapshot(H100_SLICES, name="copy", hooks=False)
    [both] = queries.device_aggregates(None)["other_drivers"]
    assert (both["devices"], both["nodes"]) == (8, 4)


def test_the_driver_filter_matches_nodes_within_their_own_cluster(client_in, sync_snapshot, tmp_path):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)
    # The same nodes in another cluster, publishing only gpu.nvidia.com devices.
    slices = [s for s in yaml.safe_load(H100_SLICES.read_text())["items"] if s["spec"]["driver"] != COMPUTE_DOMAIN]
    sync_snapshot(write_list(tmp_path / "gpu-only.json", slices), name="gpu-only", hooks=False)
    resp = client_in.get(reverse("inventory:nodes"), {"driver": "compute-domain"})
    rows = {(r.record.cluster.name, r.record.name) for r in resp.context["table"].page.object_list}
    assert rows == {("aicr", "gpu-node-1"), ("aicr", "gpu-node-2")}
    resp = client_in.get(reverse("inventory:nodes"), {"driver": "gpu.nvidia.com"})
    assert resp.context["table"].page.paginator.count == 4
