"""Before-allocation categories, on the real H100 slices with hand-built claims and pods."""

from __future__ import annotations

import copy

from diag_helpers import (
    allocation,
    base_cluster,
    categories,
    claim,
    h100_slices,
    names,
    pod,
    request,
    run,
)

from claims.diagnosis import Thresholds
from inventory.kube import parse_time


def _pending(req, **extra):
    c = claim("team-a", "job-gpu", [req], **extra)
    c["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "job", "uid": "uid-pod-job"}]
    c["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    p = pod("team-a", "job", templates={"gpu": "t"})
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "job-gpu"}]
    return [c, p]


def _fill(objs, count):
    """Allocate ``count`` real H100s to running pods."""
    devs = [(s["spec"]["pool"]["name"], d["name"]) for s in h100_slices() for d in s["spec"]["devices"]]
    for i, (pool, dev) in enumerate(devs[:count]):
        c = claim("team-b", f"busy-{i}", [request("gpu")], status={"allocation": allocation(pool, dev),
                  "reservedFor": [{"resource": "pods", "name": f"busy-{i}", "uid": f"uid-pod-busy-{i}"}]})
        objs += [c, pod("team-b", f"busy-{i}", claims={"gpu": f"busy-{i}"}, node_name=pool, phase="Running")]
    return objs


def test_plain_request_on_a_cluster_with_free_gpus_is_no_allocation_finding():
    # Two minutes old: nothing to say. An hour old although allocatable: only the catch-all,
    # which quotes what was checked (never silent, never a false allocation verdict).
    assert run(base_cluster() + _pending(request("gpu")), now=parse_time("2026-11-20T10:02:00Z")) == []
    f = run(base_cluster() + _pending(request("gpu")))
    assert categories(f) == ["pending_unexplained"]
    assert "feasible" in f[0].evidence["checked"][0]


def test_missing_device_class_is_reported_with_the_claim_and_pod():
    f = run(base_cluster() + _pending(request("gpu", "gpu.example.com")))
    assert categories(f) == ["device_class_missing"]
    assert ("ResourceClaim", "team-a", "job-gpu") in names(f[0]) and ("Pod", "team-a", "job") in names(f[0])


def test_selector_nothing_satisfies_is_no_matching_device():
    sel = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200 NVL'"
    f = run(base_cluster() + _pending(request("gpu", "gpu.nvidia.com", 1, sel)))
    assert categories(f) == ["no_matching_device"]
    assert f[0].evidence["requests"][0]["matching"] == 0


def test_count_larger_than_any_node_is_capacity_fragmented_not_exhausted():
    # 16 free H100s in the cluster, 8 per node: a count of 9 fits the cluster, no node.
    f = run(base_cluster() + _pending(request("gpu", "gpu.nvidia.com", 9)))
    assert categories(f) == ["capacity_fragmented"]
    assert f[0].evidence["subcategory"] == "no_node_large_enough"


def test_count_larger_than_the_cluster_is_no_matching_device():
    f = run(base_cluster() + _pending(request("gpu", "gpu.nvidia.com", 17)))
    assert categories(f) == ["no_matching_device"]


def test_all_matching_gpus_allocated_is_capacity_exhausted():
    f = run(_fill(base_cluster(), 16) + _pending(request("gpu")))
    assert categories(f) == ["capacity_exhausted"]
    assert f[0].evidence["requests"][0]["free"] == 0


def test_gpus_free_on_two_nodes_but_count_needs_one_node_is_capacity_exhausted():
    # 12 busy: 4 free on gpu-node-2 only; asking for 5 on one node.
    f = run(_fill(base_cluster(), 12) + _pending(request("gpu", "gpu.nvidia.com", 5)))
    assert categories(f) == ["capacity_exhausted"]


def test_distinct_attribute_that_all_devices_share_is_constraint_unsatisfiable():
    reqs = [request("a"), request("b")]
    objs = base_cluster() + _pending(reqs[0])
    objs[-2]["spec"]["devices"]["requests"] = reqs
    objs[-2]["spec"]["devices"]["constraints"] = [
        {"requests": ["a", "b"], "distinctAttribute": "gpu.nvidia.com/productName"}]
    f = run(objs)
    assert categories(f) == ["constraint_unsatisfiable"]


def _pair_with(constraint):
    reqs = [request("a"), request("b")]
    objs = base_cluster() + _pending(reqs[0])
    objs[-2]["spec"]["devices"]["requests"] = reqs
    objs[-2]["spec"]["devices"]["constraints"] = [constraint]
    return run(objs)


def test_match_attribute_on_product_name_is_satisfiable_on_real_slices():
    assert categories(_pair_with({"matchAttribute": "gpu.nvidia.com/productName"})) == ["pending_unexplained"]


def test_match_attribute_on_pcie_root_fails_because_each_real_h100_has_its_own_root():
    f = _pair_with({"matchAttribute": "resource.kubernetes.io/pcieRoot"})
    assert categories(f) == ["constraint_unsatisfiable"]


def test_young_pending_claim_waits_for_the_threshold():
    sel = "device.attributes['gpu.nvidia.com'].productName == 'nope'"
    objs = base_cluster() + _pending(request("gpu", "gpu.nvidia.com", 1, sel))
    assert run(objs, thresholds=Thresholds(pending_seconds=7200)) == []


def test_pod_naming_a_claim_in_another_namespace_is_claim_not_found():
    objs = [*base_cluster(), claim("team-a", "shared", [request("gpu")]), pod("team-b", "user", claims={"gpu": "shared"})]
    f = run(objs)
    assert categories(f) == ["claim_not_found"]
    assert ("ResourceClaim", "team-b", "shared") in names(f[0])
    assert f[0].evidence["same_name_in"] == ["team-a"]


def test_pod_with_missing_template_and_no_claim_is_template_claim_missing():
    f = run([*base_cluster(), pod("team-a", "w", templates={"gpu": "gone"})])
    assert categories(f) == ["template_claim_missing"]
    assert ("ResourceClaimTemplate", "team-a", "gone") in names(f[0])


def _control_plane(component, image, *gates):
    cmd = [component] + ([f"--feature-gates={','.join(gates)}"] if gates else [])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "kube-system", "name": f"{component}-cp-1", "labels": {"component": component}},
            "spec": {"nodeName": "cp-1", "containers": [{"name": component, "image": image, "command": cmd}]},
            "status": {"phase": "Running"}}


def test_partitionable_devices_on_1_35_without_gate_is_feature_gate_disabled():
    objs = base_cluster()
    slc = objs[-1]
    slc["spec"]["sharedCounters"] = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]
    objs += [_control_plane("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.35.3", "DRAPartitionableDevices=true"),
             _control_plane("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.35.3")]
    f = run(objs)
    assert categories(f) == ["feature_gate_disabled"]
    assert f[0].evidence["gate"] == "DRAPartitionableDevices"
    assert f[0].evidence["disabled_on"] == ["kube-scheduler"]


def test_same_slices_on_1_36_need_no_gate():
    objs = base_cluster()
    objs[-1]["spec"]["sharedCounters"] = [{"name": "c", "counters": {"memory": {"value": "80Gi"}}}]
    objs += [_control_plane("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.36.1"),
             _control_plane("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.36.1")]
    assert run(objs) == []


def test_scoring_error_on_affected_scheduler_is_scheduler_known_bug():
    objs = base_cluster() + _pending(request("gpu"))
    objs.append(_control_plane("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.35.4"))
    objs.append({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                 "metadata": {"namespace": "team-a", "name": "job.1"},
                 "regarding": {"kind": "Pod", "namespace": "team-a", "name": "job"},
                 "reason": "FailedScheduling", "type": "Warning",
                 "note": 'running Score plugins: plugin "DynamicResources" failed with: number of allocations 1 is smaller than number of claims 2',
                 "eventTime": "2026-11-20T10:01:00Z", "series": {"count": 5, "lastObservedTime": "2026-11-20T10:50:00Z"}})
    f = run(objs)
    assert "scheduler_known_bug" in categories(f)
    bug = next(x for x in f if x.category == "scheduler_known_bug")
    assert bug.evidence["fixed_in"] == "1.35.6"
    fixed = copy.deepcopy(objs)
    fixed[-2]["spec"]["containers"][0]["image"] = "registry.k8s.io/kube-scheduler:v1.35.6"
    assert "scheduler_known_bug" not in categories(run(fixed))


def _all_request():
    r = request("gpu")
    body = r["exactly"]
    body.pop("count", None)
    body["allocationMode"] = "All"
    return r


def test_an_all_request_waiting_on_an_incomplete_pool_says_so_and_what_to_do():
    """One real H100 pool declares a second slice it has not published: the scheduler refuses
    a request for All devices ("currently being updated"). The catch-all names the pool, and
    its action points at the driver instead of "unknown failure mode"."""
    objs = base_cluster() + _pending(_all_request())
    gpu_slice = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    gpu_slice["spec"]["pool"]["resourceSliceCount"] = 2
    f = run(objs)
    assert categories(f) == ["pending_unexplained"]
    pool = gpu_slice["spec"]["pool"]
    assert f[0].evidence["pool_problem"] is True
    first = f[0].evidence["checked"][0]
    assert f"gpu.nvidia.com/{pool['name']} (1 of 2 slices of generation {pool['generation']})" in first
    assert "asks for All devices" in first and "incomplete" in f[0].summary
    assert "resourceSliceCount" in f[0].next_action and "not a failure mode" not in f[0].next_action

    # The pool whole again, or a request for a count: no such check.
    gpu_slice["spec"]["pool"]["resourceSliceCount"] = 1
    f = run(objs)
    assert not f[0].evidence["pool_problem"] and "not a failure mode" in f[0].next_action
    counted = base_cluster() + _pending(request("gpu"))
    next(o for o in counted if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")["spec"]["pool"]["resourceSliceCount"] = 2
    f = run(counted)
    assert categories(f) == ["pending_unexplained"] and not f[0].evidence["pool_problem"]
    assert not any("All devices" in c for c in f[0].evidence["checked"])


def test_a_claim_waiting_on_a_pool_that_lists_a_device_twice_says_so():
    """A second slice of a real H100 pool's generation lists gpu-0 again: the scheduler refuses
    to allocate from that pool ("pool ... is invalid"), whatever the request asks for."""
    objs = base_cluster() + _pending(request("gpu"))
    gpu_slice = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    twin = copy.deepcopy(gpu_slice)
    twin["metadata"]["name"] += "-b"
    twin["metadata"]["uid"] = twin["metadata"]["uid"][:-1] + "b"
    twin["spec"]["devices"] = twin["spec"]["devices"][:1]
    gpu_slice["spec"]["pool"]["resourceSliceCount"] = twin["spec"]["pool"]["resourceSliceCount"] = 2
    f = run([*objs, twin])
    pool = gpu_slice["spec"]["pool"]["name"]
    assert categories(f) == ["pending_unexplained"] and f[0].evidence["pool_problem"]
    first = f[0].evidence["checked"][0]
    assert f"gpu.nvidia.com/{pool} (lists {twin['spec']['devices'][0]['name']} twice) is invalid" in first
    assert "not a failure mode" not in f[0].next_action


def test_a_claim_that_fits_only_on_cordoned_or_notready_nodes_says_so():
    """Both real H100 nodes are taken out of scheduling (one cordoned, one NotReady): the
    claim's devices are free, yet no pod can land there. The catch-all says so first, with
    an action that points at the nodes, not at an unknown failure mode."""
    objs = base_cluster() + _pending(request("gpu"))
    nodes = [o for o in objs if o["kind"] == "Node"]
    nodes[0]["spec"]["unschedulable"] = True
    nodes[1]["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    f = run(objs)
    assert categories(f) == ["pending_unexplained"] and f[0].evidence["unplaceable_only"]
    first = f[0].evidence["checked"][0]
    assert "fits only on gpu-node-1 (cordoned), gpu-node-2 (NotReady)" in first
    assert "uncordon" in f[0].next_action
    # One schedulable node left: nothing to say about the others.
    nodes[1]["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    f = run(objs)
    assert not f[0].evidence["unplaceable_only"] and not any("fits only on" in c for c in f[0].evidence["checked"])
