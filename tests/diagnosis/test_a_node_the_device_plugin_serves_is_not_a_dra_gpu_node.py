"""``driver_not_publishing_on_node`` only for GPU nodes meant for DRA: a node whose GPUs the
NVIDIA device plugin serves (``nvidia.com/gpu`` in allocatable) and that runs no DRA GPU
plugin (at most the ComputeDomain plugin, as in NVIDIA's GB200 setup) is not one. The
driver's kubelet-plugin pods are known by their labels and owner DaemonSet, not their names."""

from __future__ import annotations

from dx import base_cluster, categories, gpu_plugin_pod, names, node, run


def _gb200_node(name: str = "gb200-node-1"):
    n = node(name, **{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "4",
                      "nvidia.com/gpu.product": "NVIDIA-GB200"})
    n["status"]["allocatable"] = {"cpu": "140", "memory": "850Gi", "nvidia.com/gpu": "4", "pods": "110"}
    return n


def test_a_device_plugin_node_with_only_the_compute_domain_plugin_gets_no_finding():
    objs = [*base_cluster(), _gb200_node(), gpu_plugin_pod("gb200-node-1", containers=("compute-domains",))]
    assert run(objs) == []


def test_a_node_running_the_dra_gpu_plugin_without_a_slice_is_reported():
    objs = [*base_cluster(), _gb200_node(), gpu_plugin_pod("gb200-node-1")]
    f = run(objs)
    assert categories(f) == ["driver_not_publishing_on_node"]
    assert ("Node", None, "gb200-node-1") in names(f[0])
    assert ("Pod", "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-kubelet-plugin-7x2kq") in names(f[0])


def test_a_dra_gpu_node_without_device_plugin_resources_or_slice_is_reported():
    n = _gb200_node()
    del n["status"]["allocatable"]["nvidia.com/gpu"]
    assert categories(run([*base_cluster(), n])) == ["driver_not_publishing_on_node"]


def test_the_plugin_is_known_by_its_labels_not_by_its_name():
    # A plugin pod named like nothing, labelled as the chart labels it: it is the GPU plugin.
    oddly_named = gpu_plugin_pod("gb200-node-1", name="gpu-agent-0")
    assert categories(run([*base_cluster(), _gb200_node(), oddly_named])) == ["driver_not_publishing_on_node"]
    # A pod whose name says kubelet-plugin, but with no labels and no plugin DaemonSet: not a plugin.
    lookalike = gpu_plugin_pod("gb200-node-1", labelled=False)
    assert run([*base_cluster(), _gb200_node(), lookalike]) == []
