"""Real-shaped inputs for the telemetry page tests, built from the committed real fixtures."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import yaml

from tests.telemetry.realdata import H100_SCRAPE, H100_SLICES, NVML, resource_slice_objects

H200_UUID = (NVML / "h200-nvidia-smi-L.txt").read_text().split("UUID: ")[1].split(")")[0]


def h200_slice_folder(folder: Path) -> Path:
    """A snapshot folder with one gpu.nvidia.com slice for the H200 of the NVML reading: the
    real aicr H100 slice's gpu-0 entry with the H200's uuid and productName, on node
    ``h200-node-1`` (the hostname label of the backfilled H200 series)."""
    raw = copy.deepcopy(next(o for o in resource_slice_objects(H100_SLICES) if o["spec"]["driver"] == "gpu.nvidia.com"))
    dev = next(d for d in raw["spec"]["devices"] if d["name"] == "gpu-0")
    dev["attributes"]["uuid"]["string"] = H200_UUID
    dev["attributes"]["productName"]["string"] = "NVIDIA H200"
    raw["spec"]["devices"] = [dev]
    raw["spec"]["nodeName"] = raw["spec"]["pool"]["name"] = "h200-node-1"
    raw["metadata"]["name"] = "h200-node-1-gpu.nvidia.com-test"
    raw["metadata"]["uid"] = "00000000-0000-4000-8000-0000000000h2"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "h200-slice.yaml").write_text(yaml.safe_dump(raw))
    return folder


def h100_scrape_folder(folder: Path) -> Path:
    """The aicr slices and the aicr dcgm-exporter scrape, byte-identical, in one snapshot folder."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(H100_SLICES, folder / H100_SLICES.name)
    shutil.copy(H100_SCRAPE, folder / H100_SCRAPE.name)
    return folder

#: Queries every full page costs besides its own: session, user, and up to two counters the
#: header shows (e.g. the stuck-claims badge). Partials (htmx requests) cost only session + user.
PAGE_CHROME = 4
PARTIAL_CHROME = 2


def h200_range_answer(fields: tuple[str, ...] | None = None) -> dict:
    """The real H200 NVML trace as the answer Prometheus's ``/api/v1/query_range`` gives for
    its DCGM fields: the same series, labels and times as the backfilled ``h200-nvml-load.om``
    (``build_fixtures.h200_families``), values as strings, one series per field."""
    from tests.fixtures.prometheus.build_fixtures import h200_families

    result = []
    for name, rows in sorted(h200_families().items()):
        if fields is not None and name not in fields:
            continue
        labels = rows[0][0]
        result.append({"metric": {"__name__": name, **labels}, "values": [[t, repr(v)] for _, v, t in sorted(rows, key=lambda r: r[2])]})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}
