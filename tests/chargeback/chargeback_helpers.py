"""Claims and devices of a stored test case, read with the parse layer (no database)."""

from __future__ import annotations

from pathlib import Path

from claims.chargeback import GpuDevice
from inventory.kube import parse_time
from inventory.records import parse_object
from inventory.snapshot import load_path, newest_timestamp

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"


def load_case(case: str):
    """(claims records, device key -> GpuDevice, snapshot time) of ``tests/fixtures/cases/<case>``."""
    loaded = load_path(CASES / case / "snapshot")
    claims, devices = [], {}
    for obj in loaded.objects:
        r = parse_object(obj)
        if r is None:
            continue
        if r.kind == "ResourceClaim":
            claims.append(r)
        elif r.kind == "ResourceSlice":
            for d in r.devices:
                devices[d.key] = GpuDevice(
                    key=d.key, type=d.type if d.type in ("gpu", "mig") else "other", product=d.product_name or "",
                    profile=d.profile or "", uuid=d.uuid or "", parent_uuid=d.parent_uuid or "",
                    memory_bytes=d.memory_bytes, capacity=dict(d.capacity),
                )
    return claims, devices, parse_time(newest_timestamp(loaded.objects))


def claim(claims, name_prefix: str):
    return next(c for c in claims if c.name.startswith(name_prefix))
