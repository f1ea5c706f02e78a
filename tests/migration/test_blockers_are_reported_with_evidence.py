from __future__ import annotations

import pytest
from migration_fixtures import device_plugin_cluster, find, load

from migration.planner import plan_migration


def _codes(objects, server="1.36.0", target="1.36"):
    plan = plan_migration(objects, server, target)
    return {f.code: f for f in plan.findings}


def test_workload_relying_on_preemption_is_a_blocker_with_its_priority_class():
    f = _codes(load("workloads/priority.yaml"))["priority_preemption"]
    assert f.severity == "blocker"
    assert {str(e) for e in f.evidence} == {"Deployment team-b/chat-api", "PriorityClass inference-critical"}


def test_priority_class_that_never_preempts_is_not_a_blocker():
    objects = load("workloads/priority.yaml")
    dep = find(objects, "Deployment", "chat-api")
    dep["spec"]["template"]["spec"]["priorityClassName"] = "batch-low"
    assert "priority_preemption" not in _codes(objects)


def test_time_slicing_config_is_a_blocker():
    f = _codes(device_plugin_cluster() + load("workloads/sharing-timeslicing.configmap.yaml"))["gpu_sharing_time_slicing"]
    assert f.severity == "blocker" and str(f.evidence[0]) == "ConfigMap gpu-operator/time-slicing-config"


def test_mps_config_is_a_blocker():
    f = _codes(device_plugin_cluster() + load("workloads/sharing-mps.configmap.yaml"))["gpu_sharing_mps"]
    assert f.severity == "blocker"


def test_cluster_policy_naming_a_missing_plugin_config_is_a_warning():
    objects = device_plugin_cluster()
    find(objects, "ClusterPolicy", "gpu-cluster-policy")["spec"]["devicePlugin"]["config"]["name"] = "time-slicing-config"
    assert _codes(objects)["gpu_sharing_unknown"].severity == "warning"


def test_kubernetes_below_1_34_is_a_blocker():
    assert _codes(device_plugin_cluster(), server="v1.33.5")["kubernetes_too_old"].severity == "blocker"


@pytest.mark.parametrize("target", ["1.34", "1.35", "1.36", "1.37"])
def test_the_new_cluster_is_named_on_the_plans_target(target):
    """A plan made for a 1.34 cluster does not tell the reader to build one on 1.36 or 1.37."""
    plan = plan_migration(device_plugin_cluster(), "v1.33.5", target)
    too_old = next(f for f in plan.findings if f.code == "kubernetes_too_old")
    assert f"new cluster on Kubernetes {target} (this plan's target" in too_old.reason
    needs_gates = any(f.code == "target_gates_off_by_default" for f in plan.findings)
    assert ("enabled by hand" in too_old.reason) == (target < "1.36" and needs_gates)
    step = next(s for s in plan.steps if s.id == "new_cluster")
    assert step.title == f"New cluster on Kubernetes {target}, GPU nodes on the old driver branch"
    assert "1.36/1.37" not in step.title and "1.36 or 1.37" not in too_old.reason


def test_1_35_gates_are_read_from_static_pods():
    objects = device_plugin_cluster() + load("workloads/control-plane.yaml", "workloads/sharing-mps.configmap.yaml")
    codes = plan_migration(objects, "v1.35.2", "1.36").findings
    off = {f.detail.split(" ")[0]: f for f in codes if f.code == "feature_gate_off"}
    # DRAExtendedResource is on in both components in the fixture; the other two are not.
    assert "DRAExtendedResource" not in off
    assert off["DRAConsumableCapacity"].severity == "blocker"  # sharing needs it
    assert off["DRAPartitionableDevices"].severity == "warning"  # only DynamicMIG needs it


def test_gate_on_the_api_server_only_is_still_off():
    objects = device_plugin_cluster() + load("workloads/control-plane.yaml")
    sched = find(objects, "Pod", "kube-scheduler-cp-01")
    sched["spec"]["containers"][0]["command"] = [a for a in sched["spec"]["containers"][0]["command"]
                                                 if not a.startswith("--feature-gates")]
    f = next(f for f in plan_migration(objects, "v1.35.2", "1.36").findings
             if f.code == "feature_gate_off" and "DRAExtendedResource" in f.detail)
    assert "kube-scheduler" in f.reason and "kube-apiserver" not in f.detail


def test_without_static_pods_gate_state_is_unknown():
    assert "feature_gate_unknown" in _codes(device_plugin_cluster(), server="v1.35.2")


def test_1_36_needs_no_gates():
    codes = _codes(device_plugin_cluster() + load("workloads/sharing-mps.configmap.yaml"), server="v1.36.1")
    assert not {"feature_gate_off", "feature_gate_unknown"} & set(codes)


def test_cluster_policy_means_a_new_cluster():
    assert _codes(device_plugin_cluster())["clusterpolicy_in_place_unsupported"].severity == "warning"


def test_cluster_policy_and_gpu_cluster_together_is_a_blocker():
    f = _codes(device_plugin_cluster() + load("nvidia_v1alpha1_gpucluster.yaml"))["both_clusterpolicy_and_gpucluster"]
    assert f.severity == "blocker" and len(f.evidence) == 2


def test_kueue_without_device_class_mappings_is_a_blocker():
    f = _codes(device_plugin_cluster() + load("workloads/kueue-no-mappings.yaml"))["kueue_without_device_class_mappings"]
    assert f.severity == "blocker"
    assert "gpu.nvidia.com" in f.reason and "mig.nvidia.com" in f.reason


def test_kueue_with_mappings_for_the_plans_device_classes_is_fine():
    objects = device_plugin_cluster() + load("workloads/kueue-no-mappings.yaml")
    objects = [o for o in objects if not (o["kind"] == "ConfigMap")] + load("workloads/kueue-with-mappings.configmap.yaml")
    assert "kueue_without_device_class_mappings" not in _codes(objects)


def test_kserve_older_than_0_21_is_a_blocker():
    f = _codes(load("workloads/kserve.yaml"))["kserve_without_claims"]
    assert f.severity == "blocker" and "0.15.2" in f.reason


def test_kserve_0_21_is_not_a_blocker():
    objects = load("workloads/kserve.yaml")
    find(objects, "Deployment", "kserve-controller-manager")["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "kserve/kserve-controller:v0.21.0")
    assert "kserve_without_claims" not in _codes(objects)


def test_nim_service_is_a_tech_preview_warning():
    assert _codes(load("workloads/kserve.yaml"))["nim_dra_tech_preview"].severity == "warning"


def test_nodes_with_a_mig_layout_must_get_it_before_the_plugin_starts():
    f = _codes(device_plugin_cluster())["mig_layout_before_plugin"]
    assert "Node gpu-node-03" in {str(e) for e in f.evidence}
    assert "Job team-a/notebook-eval" in {str(e) for e in f.evidence}


def test_all_disabled_nodes_and_no_mig_workloads_need_no_mig_step():
    objects = [o for o in load("workloads/nodes-mixed.yaml") if o["metadata"]["name"] != "gpu-node-03"]
    objects += [o for o in load("workloads/workloads.yaml") if o["metadata"]["name"] != "notebook-eval"]
    assert "mig_layout_before_plugin" not in _codes(objects)


def test_gpu_pod_whose_controller_is_missing_is_reported():
    objects = [o for o in load("workloads/workloads.yaml") if o["kind"] != "Deployment"]
    f = _codes(objects)["controller_not_in_snapshot"]
    assert str(f.evidence[0]) == "Pod team-a/embedder-7c9f8d6b5-x2klq"
