from __future__ import annotations

from migration_fixtures import device_plugin_cluster, load

from migration.planner import plan_migration


def _steps(objects, server="1.36.0"):
    return {s.id: s for s in plan_migration(objects, server, "1.36").steps}


def test_device_plugin_cluster_has_everything_still_to_do():
    steps = _steps(device_plugin_cluster(), server="v1.33.5")
    assert [s.number for s in steps.values()] == [1, 2, 3, 4, 5]
    assert steps["new_cluster"].status == "todo"
    assert steps["gpu_operator_gpucluster"].status == "todo"
    assert steps["translate_requests"].status == "todo"
    assert steps["translate_requests"].progress == (0, 5)
    assert "R580" in steps["new_cluster"].detail


def test_gpu_cluster_without_cluster_policy_completes_step_2():
    steps = _steps(load("nvidia_v1alpha1_gpucluster.yaml", "workloads/nodes-mixed.yaml"))
    assert steps["gpu_operator_gpucluster"].status == "done"
    # The sample enables ComputeDomains; these are PCIe servers.
    assert "ComputeDomains" in steps["gpu_operator_gpucluster"].detail
    assert steps["new_cluster"].status == "done"


def test_step_1_says_what_it_still_waits_for():
    # "todo" with only "server v1.36.2" left the reader guessing what was missing.
    no_cp = [o for o in device_plugin_cluster() if o.get("kind") != "ClusterPolicy"]
    detail = _steps(no_cp, server="v1.36.2")["new_cluster"].detail
    assert detail.endswith("; not done: needs a GPUCluster (GPU Operator v26.7.2+, step 2)")
    detail = _steps(device_plugin_cluster(), server="v1.33.5")["new_cluster"].detail
    assert detail.endswith("needs the server on 1.36 or later and a GPUCluster (GPU Operator v26.7.2+, step 2) and no"
                           " ClusterPolicy (the new cluster runs the GPU Operator through GPUCluster only)")
    assert "(its version is unknown)" in _steps(no_cp, server=None)["new_cluster"].detail
    both = _steps(load("nvidia_v1alpha1_gpucluster.yaml", "v1_clusterpolicy.yaml"))["new_cluster"]
    assert both.status == "todo" and both.detail.endswith("; not done: needs no ClusterPolicy (the new cluster runs"
                                                         " the GPU Operator through GPUCluster only)")
    assert "not done" not in _steps(load("nvidia_v1alpha1_gpucluster.yaml", "workloads/nodes-mixed.yaml"))["new_cluster"].detail


def test_both_allocation_paths_block_step_2():
    steps = _steps(load("nvidia_v1alpha1_gpucluster.yaml", "v1_clusterpolicy.yaml"))
    assert steps["gpu_operator_gpucluster"].status == "blocked"


def test_step_4_counts_workloads_already_on_claims():
    # Two real quickstart pods use a ResourceClaimTemplate; our five fixtures use the device plugin.
    steps = _steps(load("gpu-test1.yaml", "workloads/workloads.yaml"))
    assert steps["translate_requests"].status == "in_progress"
    assert steps["translate_requests"].progress == (2, 7)
    assert steps["move_services"].progress == (1, 3)  # namespace gpu-test1 runs on claims only


def test_all_workloads_on_claims_finish_steps_4_and_5():
    steps = _steps(load("gpu-test1.yaml", "gpu-simple-mig.yaml"))
    assert steps["translate_requests"].status == "done"
    assert steps["move_services"].status == "done"


def test_mig_step_follows_the_mig_config_state():
    objects = device_plugin_cluster()
    assert _steps(objects)["mig_layouts"].status == "done"
    node = next(o for o in objects if o["metadata"]["name"] == "gpu-node-03")
    node["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending"
    assert _steps(objects)["mig_layouts"].status == "in_progress"
    node["metadata"]["labels"]["nvidia.com/mig.config.state"] = "failed"
    assert _steps(objects)["mig_layouts"].status == "blocked"


def test_mig_workloads_without_any_mig_node_leave_step_3_to_do():
    objects = [o for o in device_plugin_cluster() if o["metadata"]["name"] != "gpu-node-03"]
    assert _steps(objects)["mig_layouts"].status == "todo"
