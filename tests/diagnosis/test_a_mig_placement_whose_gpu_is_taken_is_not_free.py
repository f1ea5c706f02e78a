"""Under NVIDIA's dynamic MIG (every placement published, tied to its GPU by shared counters,
slices built from a real H200's ``nvidia-smi mig -lgip``) a MIG claim on a node whose only
GPU a whole-GPU claim holds is ``capacity_exhausted``: the placements' counters are taken, so
they are not free, and the claim is neither "allocatable" (a scheduler bug) nor unexplained."""

from __future__ import annotations

from dx import categories, hold, node, nvidia_classes, pending, request, run, scheduler_pod

from tests.dra.shapes import dynamic_mig_node

MIG_1G = "device.attributes['gpu.nvidia.com'].profile == '1g.18gb'"


def _cluster(whole_gpu_held: bool):
    objs = [node("gpu-node-1", **{"nvidia.com/gpu.present": "true"}), *nvidia_classes(), *dynamic_mig_node(gpus=1)]
    if whole_gpu_held:
        objs = hold(objs, [("gpu-node-1", "gpu-node-1", "gpu-0")])
    return objs + pending(request("mig", "mig.nvidia.com", 1, MIG_1G)) + [scheduler_pod("v1.36.2")]


def test_placements_of_a_gpu_held_whole_are_not_free():
    f = run(_cluster(whole_gpu_held=True))
    assert categories(f) == ["capacity_exhausted"]
    req = f[0].evidence["requests"][0]
    assert req["matching"] == 7 and req["free"] == 0


def test_with_the_gpu_free_the_same_claim_is_allocatable():
    f = run(_cluster(whole_gpu_held=False))
    assert categories(f) == ["scheduler_known_bug"]  # allocatable, pending an hour, on 1.36.2
