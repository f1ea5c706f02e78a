"""The parse layer reads the DRA fields Kubernetes 1.34-1.37 added, from real objects, the same
for every served version."""

from __future__ import annotations

import copy
from decimal import Decimal

from inventory import records
from tests.dra import shapes


def _one(objs, kind):
    return next(o for o in objs if o["kind"] == kind)


def test_binding_conditions_and_device_status_are_read_from_the_published_status():
    tmpl = _one(shapes.example("binding-conditions__binding-conditions.yaml"), "ResourceClaimTemplate")
    claim = shapes.allocate(tmpl, [], name="pod0-gpu")
    claim["status"] = shapes.fragment("dra-example-driver-binding-conditions-status-fragment.v1.yaml")["status"]
    c = records.parse_object(claim)
    [r] = c.results
    assert r.binding_conditions == ("BindingConditions",)
    assert r.binding_failure_conditions == ("BindingFailureConditions",)
    [st] = c.device_statuses
    assert st.device_key == ("gpu.example.com", "dra-example-driver-cluster-worker", "gpu-0")
    assert st.condition("BindingConditions").status == "True"
    assert c.device_status(r) is st
    assert c.binding_conditions_pending == () and c.binding_failed == ()
    waiting = copy.deepcopy(claim)
    waiting["status"]["devices"][0]["conditions"][0]["status"] = "False"
    assert [t for _, t in records.parse_object(waiting).binding_conditions_pending] == ["BindingConditions"]
    failed = copy.deepcopy(claim)
    failed["status"]["devices"][0]["conditions"].append({"type": "BindingFailureConditions", "status": "True", "reason": "Failed"})
    assert [cond.reason for _, cond in records.parse_object(failed).binding_failed] == ["Failed"]


def test_an_admin_access_claim_says_so_before_and_after_allocation():
    tmpl = _one(shapes.example("admin-access__admin-access.yaml"), "ResourceClaimTemplate")
    pending = shapes.allocate(tmpl, [])
    del pending["status"]
    assert records.parse_object(pending).admin_access is True
    alloc = shapes.allocate(tmpl, [shapes.result("admin-gpu", "gpu-0", "worker", driver="gpu.example.com", adminAccess=True)])
    c = records.parse_object(alloc)
    assert c.admin_access and c.results[0].admin_access
    plain = shapes.allocate(tmpl, [shapes.result("admin-gpu", "gpu-0", "worker", driver="gpu.example.com")])
    assert records.parse_object(plain).admin_access is False


def test_the_chosen_first_available_subrequest_is_read_from_the_result_request():
    tmpl = _one(shapes.example("prioritized-alternatives__prioritized-alternatives.yaml"), "ResourceClaimTemplate")
    c = records.parse_object(shapes.allocate(tmpl, [shapes.result("gpu/older-gpu", "gpu-1", "worker", driver="gpu.example.com")]))
    [req] = c.requests
    assert [s.name for s in req.first_available] == ["bleeding-edge-gpu", "huge-gpu", "older-gpu"]
    assert c.results[0].main_request == "gpu" and c.results[0].subrequest == "older-gpu"
    assert c.chosen_subrequests == {"gpu": "older-gpu"}


def test_capacity_requests_share_id_and_consumed_capacity_of_a_shared_gpu():
    claim = _one(shapes.example("gpu-allow-multiple-allocations__gpu-allow-multiple-allocations.yaml"), "ResourceClaim")
    assert claim["metadata"]["name"] == "shared-gpu-pod0"
    c = records.parse_object(shapes.allocate(claim, [shapes.result(
        "gpu", "gpu-0", "worker", driver="gpu.example.com", shareID="2a8f6c1e-0b7d-4c2e-9f3a-5d6e7f8a9b0c",
        consumedCapacity={"memory": "16Gi", "compute": "20"})]))
    assert c.requests[0].exactly.capacity == (("memory", "16Gi"), ("compute", "20"))
    [r] = c.results
    assert r.share_id == "2a8f6c1e-0b7d-4c2e-9f3a-5d6e7f8a9b0c"
    assert r.consumed("memory") == Decimal(16 * 2**30)
    assert r.consumed("gpu.example.com/memory") == Decimal(16 * 2**30)  # qualified name, as devices key it


def test_extended_resource_claims_and_the_classes_that_map_them():
    dc = _one(shapes.example("nvidia-extended-resources-mig-1g-12gb.yaml"), "DeviceClass")
    assert records.parse_object(dc).extended_resource_name == "nvidia.com/mig-1g.12gb"
    pod = copy.deepcopy(_one(shapes.example("extended-resource-request__extended-resource-request.yaml"), "Pod"))
    pod["status"] = {"extendedResourceClaimStatus": {
        "resourceClaimName": "pod0-extended-resources-x7k2q",
        "requestMappings": [{"containerName": "ctr0", "resourceName": "deviceclass.resource.kubernetes.io/gpu.example.com", "requestName": "container-0-request-0"}],
    }}  # fmt: skip
    p = records.parse_object(pod)
    assert p.extended_resource_claim.resource_claim_name == "pod0-extended-resources-x7k2q"
    assert p.extended_resource_claim.request_mappings[0].resource_name == "deviceclass.resource.kubernetes.io/gpu.example.com"
    assert "pod0-extended-resources-x7k2q" in p.claim_names
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "pod0-extended-resources-x7k2q", "namespace": "extended-resource-request",
                          "annotations": {records.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}}}  # fmt: skip
    assert records.parse_object(claim).extended_resource_claim is True
    del claim["metadata"]["annotations"]
    assert records.parse_object(claim).extended_resource_claim is False


def test_pod_device_health_resolves_the_pod_claim_entry_to_its_claim():
    pod = copy.deepcopy(_one(shapes.example("binding-conditions__binding-conditions.yaml"), "Pod"))
    pod["status"] = {
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "pod0-gpu-abcde"}],
        "containerStatuses": [{"name": "ctr0", "ready": True, "restartCount": 0, "allocatedResourcesStatus": [
            {"name": "claim:gpu", "resources": [{"resourceID": "gpu.example.com/dra-example-driver-cluster-worker/gpu-0", "health": "Unhealthy"}]},
        ]}],
    }  # fmt: skip
    p = records.parse_object(pod)
    [(claim, request, h)] = p.resource_health
    assert (claim, request, h.health) == ("pod0-gpu-abcde", None, "Unhealthy")
    assert h.device_key == ("gpu.example.com", "dra-example-driver-cluster-worker", "gpu-0")
    assert records.ResourceHealth("k8s.gpu.example.com/gpu=gpu-0", "Healthy").device_key is None  # a CDI id


def test_device_taint_rules_read_the_same_at_v1alpha3_v1beta2_and_v1():
    [rule] = shapes.example("device-taints-tolerations__device-taint-pod-noschedule__3-device-taint-rule.yaml")
    assert rule["apiVersion"] == "resource.k8s.io/v1beta2"
    parsed = []
    for version in ("v1alpha3", "v1beta2", "v1"):
        obj = {**copy.deepcopy(rule), "apiVersion": f"resource.k8s.io/{version}"}
        obj["status"] = shapes.fragment("dra-example-driver-devicetaintrule-status-in-progress-fragment.v1.yaml")["status"]
        r = records.parse_object(obj)
        parsed.append((r.driver, r.pool, r.device, r.taint, r.conditions))
    assert parsed[0] == parsed[1] == parsed[2]
    assert parsed[0][3].effect == "NoSchedule" and parsed[0][4][0].type == "EvictionInProgress"


def test_device_taint_rules_are_listed_at_v1_first():
    from inventory.kinds import BY_KIND

    assert BY_KIND["DeviceTaintRule"].versions[0] == "v1"


def test_counters_and_sharing_read_the_same_from_a_v1beta1_basic_device():
    [counters, gpu0, *_] = shapes.dynamic_mig_node(gpus=2)
    v1 = records.parse_object(gpu0)
    beta = copy.deepcopy(gpu0)
    beta["apiVersion"] = "resource.k8s.io/v1beta1"
    beta["spec"]["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in beta["spec"]["devices"]]
    b = records.parse_object(beta)
    assert [d.consumes_counters for d in b.devices] == [d.consumes_counters for d in v1.devices]
    whole = v1.devices[0]
    assert whole.consumes_counters[0].counter_set == "gpu-0-counter-set"
    assert whole.consumes_counters[0].counters["memory-slice-7"] == 1
    cs = records.parse_object(counters).shared_counters
    assert [s.name for s in cs] == ["gpu-0-counter-set", "gpu-1-counter-set"]
    assert cs[0].counters["multiprocessors"] == 132


def test_shared_device_fields_are_read_from_a_real_example_driver_device():
    [slice_] = [o for o in _mock_gpus()]
    dev = slice_["spec"]["devices"][0]
    dev.update({
        "allowMultipleAllocations": True, "bindsToNode": True, "bindingConditions": ["Ready"],
        "bindingFailureConditions": ["Failed"],
        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "8Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}},
        "taints": [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}],
    })  # fmt: skip
    d = records.parse_object(slice_).devices[0]
    assert d.allow_multiple_allocations and d.binds_to_node
    assert d.binding_conditions == ("Ready",) and d.binding_failure_conditions == ("Failed",)
    assert d.capacity_policies["gpu.example.com/memory"].default == "8Gi"
    assert d.capacity_policies["gpu.example.com/memory"].valid_range == ("1Gi", None, "1Gi")
    assert d.capacity_value("memory") == 80 * 2**30
    assert d.taints[0].value == "79"


def _mock_gpus():
    import yaml

    doc = yaml.safe_load((shapes.FIXTURES / "k8s" / "resourceslices" / "dra-example-driver-mock-gpus.v1.yaml").read_text())
    return doc["items"] if doc.get("kind") == "List" else [doc]
