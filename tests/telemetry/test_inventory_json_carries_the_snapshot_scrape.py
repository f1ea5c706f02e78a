"""``manage.py inventory --format json`` on a snapshot folder holding the aicr slices and the aicr
dcgm-exporter scrape: the scrape's values are on the 8 GPUs of gpu-node-1 and on none of
gpu-node-2, with the exporter's pod on gpu 0."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from inventory.dcgm import parse_exposition
from tests.telemetry.pagedata import h100_scrape_folder
from tests.telemetry.realdata import H100_SCRAPE

pytestmark = pytest.mark.django_db


def test_the_scrape_values_are_on_gpu_node_1_and_none_on_gpu_node_2(sync_snapshot, tmp_path):
    sync_snapshot(h100_scrape_folder(tmp_path / "snap"), name="aicr")
    out = StringIO()
    call_command("inventory", "--format", "json", "--cluster", "aicr", stdout=out)
    (cluster,) = json.loads(out.getvalue())["clusters"]
    gpus = {
        (n["name"], d["uuid"]): d
        for n in cluster["nodes"] for d in n["devices"] if d["driver"] == "gpu.nvidia.com"
    }  # fmt: skip
    samples = parse_exposition(H100_SCRAPE.read_text())
    on_1 = {u: d for (node, u), d in gpus.items() if node == "gpu-node-1"}
    on_2 = [d for (node, _), d in gpus.items() if node == "gpu-node-2"]
    assert len(on_1) == 8 and len(on_2) == 8
    for uuid, d in on_1.items():
        want = {s.field: s.value for s in samples if s.uuid == uuid}
        assert want and d["metrics"] == want and d["metrics_at"]
    assert all(d["metrics"] == {} and d["metrics_at"] is None and d["metrics_pod"] is None for d in on_2)
    pod = next(s for s in samples if s.pod)
    assert on_1[pod.uuid]["metrics_pod"] == f"{pod.namespace}/{pod.pod}"
    assert next(d for d in on_1.values() if d["name"] == "gpu-0") is on_1[pod.uuid]
