"""Through the real sync, findings of the new categories are stored like any other: a count-8
claim on three real 8x H100 nodes with its free GPUs spread (``capacity_fragmented``) and an
allocatable claim pending an hour (``pending_unexplained``); the database's category check
accepts them and the sync ends ``ok``."""

from __future__ import annotations

import json

import pytest
from dx import base_cluster, gpu_devices, hold, pending, request, scheduler_event, third_h100_node

from claims.models import Finding

pytestmark = pytest.mark.django_db


def test_a_sync_stores_capacity_fragmented_and_pending_unexplained(tmp_path, sync_snapshot):
    objs = base_cluster() + third_h100_node()
    by_node: dict[str, list] = {}
    for dev in gpu_devices(objs):
        by_node.setdefault(dev[0], []).append(dev)
    objs = hold(objs, [d for devs in by_node.values() for d in devs[:3]])
    objs += pending(request("gpu", "gpu.nvidia.com", 8), name="trainer")
    objs += pending(request("gpu", "gpu.nvidia.com", 1), ns="team-c", name="notebook")
    # The scheduler's event is the snapshot's newest timestamp: the claims have waited an hour.
    objs.append(scheduler_event("team-a", "trainer", "0/3 nodes are available: 3 cannot allocate all claims."))
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": objs}))
    run = sync_snapshot(tmp_path, name="fragmented")
    assert run.status == "ok", run.errors
    stored = {(f.category, f.name) for f in Finding.objects.filter(cluster__name="fragmented", resolved_at__isnull=True)}
    assert ("capacity_fragmented", "trainer-gpu") in stored
    assert ("pending_unexplained", "notebook-gpu") in stored
