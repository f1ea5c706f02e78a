"""MIG devices of the fleet follow the profile tables: valid placements, no overlap, real figures."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from devtools.fleet import GPU_MODELS, all_smallest, balanced, generate_fleet, place_profiles
from inventory import mig
from tests.devtools.test_fleet_consistency_helpers import device_index

NAME = re.compile(r"^gpu-(\d+)-mig-([0-9a-z]+)-(\d+)-(\d+)$")


@pytest.fixture(scope="module")
def migs():
    devs = [d for d in device_index(generate_fleet(45, seed=8)).values() if d.type == "mig"]
    assert devs
    return devs


def test_each_instance_sits_at_an_allowed_placement_with_the_tables_figures(migs):
    for d in migs:
        table = mig.model_for(d.product_name)
        prof = table.profile(d.profile)
        m = NAME.match(d.name)
        assert m, d.name
        assert m.group(2) == prof.name.replace(".", "") and int(m.group(3)) == prof.id
        start = int(m.group(4))
        assert start in prof.placements
        assert mig.occupied_slices(d.name, d.capacity, d.profile, d.product_name) == set(range(start, start + prof.size))
        assert d.memory_bytes == round(prof.memory_gib * 1024) * 1024**2
        for cap in ("multiprocessors", "copyEngines", "decoders", "encoders", "jpegEngines", "ofaEngines"):
            assert f"gpu.nvidia.com/{cap}" in d.capacity
        assert d.uuid.startswith("MIG-") and d.parent_uuid.startswith("GPU-")


def test_instances_of_one_gpu_never_share_a_memory_slice(migs):
    used: dict[str, set[int]] = defaultdict(set)
    for d in migs:
        occ = mig.occupied_slices(d.name, d.capacity, d.profile, d.product_name)
        assert not used[d.parent_uuid] & occ, f"{d.name} overlaps on {d.parent_uuid}"
        used[d.parent_uuid] |= occ
        assert max(occ) < mig.model_for(d.product_name).slices


def test_h200_instances_carry_the_real_lgip_figures(migs):
    one = next(d for d in migs if d.profile == "1g.18gb")
    assert one.capacity["gpu.nvidia.com/multiprocessors"] == "16"
    assert one.capacity["gpu.nvidia.com/memory"] == "16384Mi"


@pytest.mark.parametrize("model", sorted(GPU_MODELS))
def test_named_layouts_fit(model):
    product = GPU_MODELS[model].product
    for layout in (all_smallest(model), balanced(model)):
        spans = [set(range(s, s + mig.model_for(product).profile(p).size)) for p, s in layout]
        assert sum(len(s) for s in spans) == len(set().union(*spans))


def test_profiles_that_do_not_fit_are_refused():
    with pytest.raises(ValueError):
        place_profiles("NVIDIA H200 NVL", ["3g.71gb", "3g.71gb", "1g.18gb"])
    with pytest.raises(ValueError):
        place_profiles("NVIDIA H200 NVL", ["1g.24gb"])
