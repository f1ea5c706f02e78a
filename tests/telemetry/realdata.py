"""Paths of the real-data fixtures the telemetry tests read, and a slice-file reader."""

from __future__ import annotations

from pathlib import Path

import yaml

from inventory.parse import Device, parse_resource_slice

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DCGM = FIXTURES / "dcgm"
NVML = FIXTURES / "nvml"
H100_SCRAPE = DCGM / "aicr-eks-h100-dcgm-exporter-sample.prom"
H100_QUERY_GPU_UTIL = DCGM / "aicr-eks-h100-prometheus-query-gpu-util.json"
VGPU_PAGE = DCGM / "vks-grid-a100-10c-vgpu-dcgm-exporter.prom"
A30_MIG = DCGM / "dcgm-exporter-issue-68-a30-mig-2g12gb-excerpt.prom"
A100_MIG_RELABELLED = DCGM / "dcgm-exporter-issue-272-a100-80gb-mig-relabelled-excerpt.prom"
H200_CSV = NVML / "h200-nvml-timeseries.csv"
H100_SLICES = FIXTURES / "k8s" / "resourceslices" / "aicr-eks-2x8-h100-gpu-and-computedomain-slices.v1.yaml"
MIG_CASE = FIXTURES / "cases" / "constraint-unsatisfiable-parentuuid" / "cluster.yaml"


def resource_slice_objects(path: Path) -> list[dict]:
    """Raw ResourceSlice objects of a List or multi-document YAML file."""
    out: list[dict] = []
    for doc in yaml.safe_load_all(path.read_text()):
        if not isinstance(doc, dict):
            continue
        items = doc.get("items") if doc.get("kind") == "List" else [doc]
        out.extend(o for o in items or [] if isinstance(o, dict) and o.get("kind") == "ResourceSlice")
    return out


def slice_devices(path: Path) -> list[Device]:
    """Parsed devices of every ResourceSlice in ``path``."""
    return [d for obj in resource_slice_objects(path) for d in parse_resource_slice(obj).devices]
