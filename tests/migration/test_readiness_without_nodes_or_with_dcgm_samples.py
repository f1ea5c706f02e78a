"""Readiness items that need Node labels are unknown when no Node object was read (a cluster
known from its ResourceSlices only), and stored DCGM samples count as a running exporter."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest
from migration_fixtures import load

from inventory.models import Device
from migration.evaluation import evaluate_cluster
from migration.models import ReadinessEvaluation
from migration.readiness import evaluate_readiness
from tests.conftest import FIXTURES, H100_SLICES

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DCGM_SCRAPE = FIXTURES / "dcgm" / "aicr-eks-h100-dcgm-exporter-sample.prom"


def _slices_only() -> list[dict]:
    from inventory.snapshot import load_path

    objects = load_path(H100_SLICES).objects
    assert objects and not any(o.get("kind") == "Node" for o in objects)
    return objects


def _statuses(objects, **kw) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {i.id: (i.status, i.evidence) for i in evaluate_readiness(objects, NOW, **kw).items}


def test_slices_without_node_objects_leave_mig_geometry_unknown():
    items = _statuses(_slices_only())
    status, evidence = items["mig_geometry_declared"]
    assert status == "unknown"
    assert any("no Node objects" in line for line in evidence)
    assert items["gpu_nodes_tainted"][0] == "unknown" and items["gpu_node_pool"][0] == "unknown"


def test_empty_raw_node_placeholders_are_ignored():
    # inventory.exports.cluster_objects gives ``{}`` for a node known only from its slices.
    items = _statuses([*_slices_only(), {}, {}])
    assert items["mig_geometry_declared"][0] == "unknown"


def test_gpu_nodes_known_only_from_slices_beside_other_nodes_leave_mig_geometry_unknown():
    cpu_only = [o for o in load("workloads/nodes-mixed.yaml") if o.get("kind") == "Node"
                and (o["metadata"].get("labels") or {}).get("nvidia.com/gpu.present") != "true"]
    assert cpu_only
    status, evidence = _statuses([*_slices_only(), *cpu_only])["mig_geometry_declared"]
    assert status == "unknown" and "known only from ResourceSlices" in evidence[0]


def test_node_objects_without_mig_capable_gpus_pass_mig_geometry():
    nodes = load("workloads/nodes-mixed.yaml")
    for n in nodes:
        labels = n["metadata"].get("labels") or {}
        for k in [k for k in labels if k.startswith("nvidia.com/mig.")]:
            del labels[k]
    assert any(n.get("kind") == "Node" for n in nodes)
    assert _statuses(nodes)["mig_geometry_declared"] == ("pass", ("no MIG-capable GPU nodes",))


def test_devices_with_dcgm_samples_count_as_a_running_exporter():
    without = _statuses(_slices_only())["dcgm_alerts"]
    assert any("no running dcgm-exporter" in line for line in without[1])
    status, evidence = _statuses(_slices_only(), dcgm_devices_with_metrics=8)["dcgm_alerts"]
    assert not any("no running dcgm-exporter" in line for line in evidence)
    assert "DCGM samples stored for 8 device(s)" in evidence
    assert status == "fail" and any("no alert rule" in line for line in evidence)  # rules still needed


def test_production_like_rules_with_dcgm_samples_and_no_exporter_object_pass():
    objects = [o for o in load("workloads/nodes-mixed.yaml", "workloads/prometheusrule-gpu.yaml")]
    assert _statuses(objects)["dcgm_alerts"][0] == "fail"
    assert _statuses(objects, dcgm_devices_with_metrics=3)["dcgm_alerts"][0] == "pass"


@pytest.mark.django_db
def test_a_stored_cluster_with_dcgm_samples_shows_the_exporter_and_a_resync_writes_no_row(sync_snapshot, tmp_path):
    folder = tmp_path / "aicr"
    folder.mkdir()
    shutil.copy(H100_SLICES, folder / H100_SLICES.name)
    shutil.copy(DCGM_SCRAPE, folder / DCGM_SCRAPE.name)
    sync_snapshot(folder, name="aicr")
    cluster_devices = Device.objects.filter(cluster__name="aicr").exclude(metrics={}).count()
    assert cluster_devices > 0
    ev = ReadinessEvaluation.objects.get(cluster__name="aicr")
    item = next(i for i in ev.items if i["id"] == "dcgm_alerts")
    assert f"DCGM samples stored for {cluster_devices} device(s)" in item["evidence"]
    assert next(i for i in ev.items if i["id"] == "mig_geometry_declared")["status"] == "unknown"
    sync_snapshot(folder, name="aicr")
    _row, created = evaluate_cluster(ev.cluster, datetime.now(UTC))
    assert not created and ReadinessEvaluation.objects.filter(cluster__name="aicr").count() == 1
