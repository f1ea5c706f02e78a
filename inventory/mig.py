"""MIG profile tables and the free-by-profile computation.

Pure: no Django. Tables are data (``inventory/data/mig_profiles.yaml``), one entry per GPU
model, keyed by the ``productName`` attribute the NVIDIA DRA driver publishes.

A MIG instance occupies a contiguous run of memory slices starting at one of its profile's
allowed placements. The NVIDIA driver publishes the slices a MIG device occupies as
capacities ``memorySlice<N>``; the device name also ends in ``-<placement start>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data" / "mig_profiles.yaml"
_SLICE_CAP = re.compile(r"(?:^|/)memorySlice(\d+)$")
_NAME_PLACEMENT = re.compile(r"-mig-[0-9a-z+]+-(\d+)-(\d+)$")


@dataclass(frozen=True)
class Profile:
    name: str
    id: int
    size: int
    placements: tuple[int, ...]
    memory_gib: float
    max: int | None = None


@dataclass(frozen=True)
class GpuModel:
    products: tuple[str, ...]
    slices: int
    profiles: tuple[Profile, ...]

    def profile(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.name == name), None)


@cache
def models() -> tuple[GpuModel, ...]:
    doc = yaml.safe_load(DATA.read_text())
    return tuple(
        GpuModel(
            products=tuple(m["products"]),
            slices=int(m["slices"]),
            profiles=tuple(
                Profile(p["name"], int(p["id"]), int(p["size"]), tuple(p["placements"]), float(p["memory_gib"]), p.get("max"))
                for p in m["profiles"]
            ),
        )
        for m in doc["models"]
    )


def model_for(product_name: str | None) -> GpuModel | None:
    """The profile table for a ``productName``; None for GPUs without MIG or unknown models."""
    if not product_name:
        return None
    return next((m for m in models() if product_name in m.products), None)


def occupied_slices(name: str, capacity: Mapping[str, str], profile: str | None, product: str | None) -> set[int]:
    """Memory slices one MIG device occupies: from ``memorySlice<N>`` capacities, else from
    the placement start at the end of its name plus the profile's size."""
    found = {int(m.group(1)) for k in capacity if (m := _SLICE_CAP.search(k))}
    if found:
        return found
    model = model_for(product)
    prof = model.profile(profile) if model and profile else None
    m = _NAME_PLACEMENT.search(name)
    if prof and m:
        start = int(m.group(2))
        return set(range(start, start + prof.size))
    return set()


def fit_more(model: GpuModel, occupied: Iterable[int]) -> dict[str, int]:
    """How many more instances of each profile fit beside the occupied slices of one GPU.

    Counted per profile on its own (not combined): for each profile, place greedily at
    the lowest free allowed start; aligned placements make greedy optimal here.
    """
    used = set(occupied)
    out: dict[str, int] = {}
    for p in model.profiles:
        taken = set(used)
        n = 0
        for start in p.placements:
            span = set(range(start, start + p.size))
            if span <= set(range(model.slices)) and not span & taken:
                taken |= span
                n += 1
                if p.max is not None and n >= p.max:
                    break
        out[p.name] = n
    return out
