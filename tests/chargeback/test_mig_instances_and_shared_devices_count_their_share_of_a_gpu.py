"""A whole GPU counts 1, a MIG instance its profile's memory slices of the GPU model, a shared
device its consumedCapacity share (real-shaped claims of the stored cases)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from chargeback_helpers import claim, load_case

from claims import chargeback as cb
from inventory import mig


def test_whole_gpus_count_one_each():
    claims, devices, _ = load_case("mig-and-full-gpu-both-advertised")
    held, skipped = cb.claim_holdings("c", claim(claims, "all-gpus"), devices, None)
    assert skipped == 0
    assert [(h.kind, h.share) for h in held] == [("gpu", 1.0), ("gpu", 1.0)]
    assert {h.product for h in held} == {"NVIDIA A100 80GB PCIe"}


def test_a_mig_instance_counts_its_profiles_memory_slices_of_the_gpu_model():
    claims, devices, _ = load_case("constraint-unsatisfiable-parentuuid")
    held, _ = cb.claim_holdings("c", claim(claims, "jupyter-mig"), devices, None)
    assert held and {h.kind for h in held} == {"mig"}
    for h in held:
        dev = devices[h.device]
        model = mig.model_for(dev.product)
        assert model is not None  # H100 80GB HBM3 is in the profile tables
        assert h.share == pytest.approx(model.profile(dev.profile).size / model.slices)
        assert 0 < h.share < 1


def test_a_mig_instance_of_a_model_without_profile_table_counts_its_memory_over_the_parent_gpus():
    claims, devices, _ = load_case("mig-and-full-gpu-both-advertised")
    held, _ = cb.claim_holdings("c", claim(claims, "all-migs"), devices, None)
    assert len(held) == 8 and {h.kind for h in held} == {"mig"}
    for h in held:
        dev = devices[h.device]
        assert mig.model_for(dev.product) is None  # A100 80GB PCIe: no table, memory decides
        parent = next(d for d in devices.values() if d.uuid == dev.parent_uuid)
        assert h.share == pytest.approx(dev.memory_bytes / parent.memory_bytes)
        assert 0 < h.share < 1


def test_a_shared_device_counts_its_consumed_capacity_share():
    claims, devices, _ = load_case("orphan-claim-reserved-for-deleted-pod")
    c = claims[0]
    held, _ = cb.claim_holdings("c", c, devices, None)
    assert [(h.kind, h.share) for h in held] == [("shared", 1.0)]  # cores 100 of 100
    quarter = replace(c, results=tuple(r._replace(consumed_capacity=(("cores", "25"),)) for r in c.results))
    held, _ = cb.claim_holdings("c", quarter, devices, None)
    assert [(h.kind, h.share) for h in held] == [("shared", 0.25)]


def test_a_consumed_capacity_the_device_does_not_publish_falls_back_to_the_device_rule():
    claims, devices, _ = load_case("orphan-claim-reserved-for-deleted-pod")
    c = claims[0]
    odd = replace(c, results=tuple(r._replace(consumed_capacity=(("bandwidth", "5"),)) for r in c.results))
    held, _ = cb.claim_holdings("c", odd, devices, None)
    # The HAMi device's type is not gpu/mig, but it names a GPU product: a whole GPU.
    assert [(h.kind, h.share) for h in held] == [("gpu", 1.0)]


def test_results_naming_unpublished_devices_are_not_counted():
    claims, _, _ = load_case("mig-and-full-gpu-both-advertised")
    held, skipped = cb.claim_holdings("c", claim(claims, "all-gpus"), {}, None)
    assert held == [] and skipped == 2
