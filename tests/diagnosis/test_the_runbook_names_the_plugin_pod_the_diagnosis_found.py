"""A runbook's ``<kubelet-plugin-pod>`` is the pod the diagnosis recognised as the driver's
kubelet plugin (by its labels and owner DaemonSet, listed in the finding's evidence), however
it is named; a pod merely named like a plugin is not taken for one."""

from __future__ import annotations

from dx import base_cluster, gpu_plugin_pod, node, pod, run

from claims.runbooks import placeholder_values


def _finding(*extra):
    n = node("gb200-node-1", **{"nvidia.com/gpu.present": "true"})
    (f,) = run([*base_cluster(), n, *extra])
    return f


def test_an_oddly_named_labelled_plugin_pod_fills_the_placeholder():
    f = _finding(gpu_plugin_pod("gb200-node-1", name="gpu-agent-0"))
    assert f.category == "driver_not_publishing_on_node"
    values = placeholder_values([o.to_dict() for o in f.objects], "gb200-node-1", evidence=f.evidence)
    assert values["kubelet-plugin-pod"] == "gpu-agent-0" and values["driver-ns"] == "nvidia-dra-driver-gpu"


def test_a_pod_named_like_a_plugin_is_not_the_plugin_when_the_diagnosis_found_another():
    lookalike = pod("team-a", "my-kubelet-plugin-test", node_name="gb200-node-1", phase="Running")
    f = _finding(gpu_plugin_pod("gb200-node-1", name="gpu-agent-0"), lookalike)
    involved = [{"kind": "Pod", "namespace": "team-a", "name": "my-kubelet-plugin-test"},
                *(o.to_dict() for o in f.objects)]
    values = placeholder_values(involved, "gb200-node-1", evidence=f.evidence)
    assert values["kubelet-plugin-pod"] == "gpu-agent-0"
