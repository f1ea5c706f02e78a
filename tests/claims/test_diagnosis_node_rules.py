"""Driver, node and device categories on real slice shapes, modified per test."""

from __future__ import annotations

import copy

from diag_helpers import allocation, base_cluster, categories, claim, names, node, pod, request, run


def _plugin(node_name, ready=True, restarts=0, waiting=None):
    p = pod("nvidia-dra-driver-gpu", f"nvidia-dra-driver-gpu-kubelet-plugin-{node_name[-1]}",
            node_name=node_name, phase="Running",
            labels={"nvidia-dra-driver-gpu-component": "kubelet-plugin"})
    p["spec"]["resourceClaims"] = []
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {"startedAt": "2026-11-19T00:00:00Z"}}
    p["status"]["containerStatuses"] = [{"name": "gpus", "ready": ready, "restartCount": restarts, "state": state}]
    return p


def _reserved(name, pool, *devs, node_name=None, **meta):
    c = claim("team-a", name, [request("gpu", "gpu.nvidia.com", len(devs))],
              status={"allocation": allocation(pool, *devs),
                      "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-pod-{name}"}]})
    p = pod("team-a", name, claims={"gpu": name}, node_name=node_name or pool, phase="Running", **meta)
    return [c, p]


def test_gpu_node_without_any_gpu_slice_is_driver_not_publishing():
    objs = [*base_cluster(), node("gpu-node-3", **{"nvidia.com/gpu.present": "true"})]
    f = run(objs)
    assert categories(f) == ["driver_not_publishing_on_node"]
    assert ("Node", None, "gpu-node-3") in names(f[0])


def test_real_slice_emptied_with_crashing_plugin_is_empty_pool():
    objs = base_cluster()
    objs[-1]["spec"]["devices"] = []
    objs.append(_plugin("gpu-node-2", ready=False, restarts=9, waiting="CrashLoopBackOff"))
    f = run(objs)
    assert categories(f) == ["driver_publishing_empty_pool"]
    assert "CrashLoopBackOff" in f[0].summary


def test_not_registered_event_on_old_kubelet_cites_the_known_bug():
    objs = base_cluster() + _reserved("infer", "gpu-node-1", "gpu-1")
    objs[0]["status"]["nodeInfo"]["kubeletVersion"] = "v1.34.1"
    objs[-1]["status"]["phase"] = "Pending"
    objs.append({"apiVersion": "v1", "kind": "Event", "metadata": {"namespace": "team-a", "name": "infer.1"},
                 "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "infer"},
                 "reason": "FailedPrepareDynamicResources", "type": "Warning",
                 "message": "Failed to prepare dynamic resources: DRA driver gpu.nvidia.com is not registered",
                 "source": {"component": "kubelet", "host": "gpu-node-1"}, "count": 4,
                 "firstTimestamp": "2026-11-20T10:10:00Z", "lastTimestamp": "2026-11-20T10:40:00Z"})
    f = run(objs)
    assert categories(f) == ["driver_not_registered_on_node"]
    assert f[0].evidence["fixed_in"] == "1.34.2"


def _failed_event(pod_name, message, reason="FailedPrepareDynamicResources"):
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"namespace": "team-a", "name": f"{pod_name}.2"},
            "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": pod_name},
            "reason": reason, "type": "Warning", "message": message,
            "source": {"component": "kubelet", "host": "gpu-node-1"}, "count": 3,
            "firstTimestamp": "2026-11-20T10:10:00Z", "lastTimestamp": "2026-11-20T10:40:00Z"}


def test_prepare_error_from_plugin_is_prepare_failed():
    objs = base_cluster() + _reserved("infer", "gpu-node-1", "gpu-1") + [_plugin("gpu-node-1")]
    objs[-2]["status"]["phase"] = "Pending"
    objs.append(_failed_event("infer", "NodePrepareResources failed for ResourceClaim infer: NVML error"))
    f = run(objs)
    assert categories(f) == ["prepare_failed_on_node"]


def test_unresolvable_cdi_devices_is_cdi_injection_failed():
    objs = base_cluster() + _reserved("infer", "gpu-node-1", "gpu-1")
    objs[-1]["status"]["phase"] = "Pending"
    objs.append(_failed_event("infer", "failed to create containerd container: CDI device injection failed: "
                              "unresolvable CDI devices k8s.gpu.nvidia.com/claim=abc-gpu-1", reason="Failed"))
    assert categories(run(objs)) == ["cdi_injection_failed"]


def test_allocation_naming_an_unpublished_device_is_stale_slice():
    objs = base_cluster() + _reserved("old", "gpu-node-9", "gpu-0")
    f = run(objs)
    assert categories(f) == ["stale_slice_driver_unavailable"]


def test_mig_label_count_without_mig_devices_is_mig_not_published():
    objs = base_cluster()
    objs[0]["metadata"]["labels"].update({"nvidia.com/mig.config": "all-1g.10gb",
                                          "nvidia.com/mig-1g.10gb.count": "56"})
    f = run(objs)
    assert categories(f) == ["mig_instance_not_published"]


def _mig_child(parent, idx):
    attrs = {k: v for k, v in parent["attributes"].items()}
    attrs["type"] = {"string": "mig"}
    attrs["profile"] = {"string": "1g.10gb"}
    attrs["parentUUID"] = {"string": parent["attributes"]["uuid"]["string"]}
    attrs["uuid"] = {"string": f"MIG-test-{idx}"}
    return {"name": f"{parent['name']}-mig-19-{idx}", "attributes": attrs, "capacity": {"memory": {"value": "9984Mi"}}}


def test_whole_gpu_and_its_mig_instance_both_allocated_is_double_allocation():
    objs = base_cluster()
    slc = objs[-2]
    parent = next(d for d in slc["spec"]["devices"] if d["name"] == "gpu-1")
    slc["spec"]["devices"].append(_mig_child(parent, 0))
    pool = slc["spec"]["pool"]["name"]
    objs += _reserved("whole", pool, "gpu-1") + _reserved("part", pool, "gpu-1-mig-19-0")
    f = run(objs)
    assert categories(f) == ["overlapping_devices_double_allocation"]
    assert {("ResourceClaim", "team-a", "whole"), ("ResourceClaim", "team-a", "part")} <= names(f[0])


def test_one_exclusive_gpu_allocated_to_two_claims_is_double_allocation():
    objs = base_cluster() + _reserved("first", "gpu-node-1", "gpu-1") + _reserved("second", "gpu-node-1", "gpu-1")
    f = run(objs)
    assert categories(f) == ["overlapping_devices_double_allocation"]
    assert f[0].severity == "critical"
    assert {("ResourceClaim", "team-a", "first"), ("ResourceClaim", "team-a", "second"), ("Node", None, "gpu-node-1")} <= names(f[0])


def test_a_device_that_allows_multiple_allocations_or_an_admin_access_claim_is_no_double_allocation():
    objs = base_cluster() + _reserved("first", "gpu-node-1", "gpu-1") + _reserved("second", "gpu-node-1", "gpu-1")
    slc = next(o for o in objs if o.get("kind") == "ResourceSlice" and o["spec"]["pool"]["name"] == "gpu-node-1")
    next(d for d in slc["spec"]["devices"] if d["name"] == "gpu-1")["allowMultipleAllocations"] = True
    assert "overlapping_devices_double_allocation" not in categories(run(objs))

    objs = base_cluster() + _reserved("first", "gpu-node-1", "gpu-1") + _reserved("monitor", "gpu-node-1", "gpu-1")
    monitor = next(o for o in objs if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == "monitor")
    for r in monitor["status"]["allocation"]["devices"]["results"]:
        r["adminAccess"] = True
    assert "overlapping_devices_double_allocation" not in categories(run(objs))


def test_terminating_pod_with_plugin_down_is_unprepare_blocked():
    objs = base_cluster() + _reserved("leaving", "gpu-node-1", "gpu-1", deletionTimestamp="2026-11-20T10:20:00Z")
    objs.append(_plugin("gpu-node-1", ready=False, restarts=3, waiting="CrashLoopBackOff"))
    f = run(objs)
    assert categories(f) == ["unprepare_blocked_driver_unavailable"]


def test_noexecute_taint_without_toleration_in_allocation_is_device_taint_eviction():
    objs = base_cluster() + _reserved("diag", "gpu-node-1", "gpu-1")
    slc = next(o for o in objs if o.get("kind") == "ResourceSlice" and o["spec"]["pool"]["name"] == "gpu-node-1")
    dev = next(d for d in slc["spec"]["devices"] if d["name"] == "gpu-1")
    dev["taints"] = [{"key": "example.com/unhealthy", "value": "true", "effect": "NoExecute",
                      "timeAdded": "2026-11-20T10:30:00Z"}]
    f = run(objs)
    assert categories(f) == ["device_taint_eviction"]


def test_pending_claim_blocked_only_by_taints_is_device_taint_eviction():
    objs = base_cluster()
    for o in objs:
        if o.get("kind") == "ResourceSlice":
            for d in o["spec"]["devices"]:
                d["taints"] = [{"key": "maint", "effect": "NoSchedule"}]
    c = claim("team-a", "job-gpu", [request("gpu")])
    objs += [c, pod("team-a", "job", claims={"gpu": "job-gpu"})]
    f = run(objs)
    assert categories(f) == ["device_taint_eviction"]
    assert f[0].evidence["subcategory"] == "blocked_by_taint"


def test_driver_wide_taint_rule_over_two_nodes_is_too_broad():
    objs = [*base_cluster(), {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "maint"}, "spec": {"deviceSelector": {"driver": "gpu.nvidia.com"}, "taint": {"key": "maint", "value": "true", "effect": "NoSchedule"}}}]
    f = run(objs)
    assert "device_taint_rule_too_broad" in categories(f)


def test_taint_rule_for_one_device_is_not_too_broad():
    objs = [*base_cluster(), {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "one"}, "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-3"}, "taint": {"key": "maint", "effect": "NoSchedule"}}}]
    assert run(objs) == []


def test_a_device_only_an_older_pool_generation_lists_is_no_device_to_hold():
    """The driver re-created gpu-node-1's pool at a newer generation without gpu-7, the old
    slice still listed: the scheduler reads the newest generation alone, so a claim holding
    gpu-7 holds a device no slice offers, and a pending claim cannot count it as free."""
    objs = base_cluster() + _reserved("old", "gpu-node-1", "gpu-7")
    old = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["pool"]["name"] == "gpu-node-1"
               and o["spec"]["driver"] == "gpu.nvidia.com")
    new = copy.deepcopy(old)
    new["metadata"]["name"] += "-r2"
    new["metadata"]["uid"] = new["metadata"]["uid"][:-2] + "r2"
    new["spec"]["pool"]["generation"] += 1
    new["spec"]["devices"] = [d for d in new["spec"]["devices"] if d["name"] != "gpu-7"]
    objs.append(new)
    f = run(objs)
    assert categories(f) == ["stale_slice_driver_unavailable"]
    assert "older pool generation lists gpu-node-1/gpu-7" in f[0].summary
    # Without the newer slice the same claim is healthy.
    objs.remove(new)
    assert run(objs) == []
