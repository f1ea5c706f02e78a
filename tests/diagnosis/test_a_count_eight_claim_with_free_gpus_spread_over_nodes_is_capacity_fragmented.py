"""A count-8 claim on three real 8x H100 nodes with 15 GPUs free, 5 on each node, is
``capacity_fragmented`` (the cluster has enough, no node does), never ``capacity_exhausted``."""

from __future__ import annotations

from dx import base_cluster, categories, gpu_devices, hold, names, pending, request, run, third_h100_node


def _cluster(busy_per_node: int):
    objs = base_cluster() + third_h100_node()
    by_node: dict[str, list] = {}
    for dev in gpu_devices(objs):
        by_node.setdefault(dev[0], []).append(dev)
    busy = [d for devs in by_node.values() for d in devs[:busy_per_node]]
    return hold(objs, busy) + pending(request("gpu", "gpu.nvidia.com", 8))


def test_fifteen_free_gpus_over_three_nodes_do_not_fit_a_count_of_eight():
    f = run(_cluster(busy_per_node=3))
    assert categories(f) == ["capacity_fragmented"]
    ev = f[0].evidence
    assert ev["requests"][0]["matching"] == 24 and ev["requests"][0]["free"] == 15
    assert ev["largest_free_on_one_node"] == 5
    assert sorted(ev["free_per_node"]) == ["gpu-node-1", "gpu-node-2", "node-a.example.internal"]
    assert ("Node", None, "node-a.example.internal") in names(f[0])
    assert ("ResourceClaim", "team-a", "job-gpu") in names(f[0])
    assert "at most 5 on one node" in f[0].summary


def test_one_node_with_eight_free_is_neither_fragmented_nor_exhausted():
    objs = base_cluster() + third_h100_node()
    devs = [d for d in gpu_devices(objs) if d[0] != "gpu-node-1"]
    f = run(hold(objs, devs[:9]) + pending(request("gpu", "gpu.nvidia.com", 8)))
    assert "capacity_fragmented" not in categories(f) and "capacity_exhausted" not in categories(f)


def test_fewer_free_than_the_count_in_the_whole_cluster_stays_capacity_exhausted():
    f = run(_cluster(busy_per_node=6))  # 6 free in all
    assert categories(f) == ["capacity_exhausted"]
