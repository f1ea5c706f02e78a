"""Device health: the worst of the kubelet's report in the pod, the claim's status.devices and
the NVIDIA driver's health taints; None when nothing reports (inventory.capacity)."""

from __future__ import annotations

import copy

from inventory import capacity, records
from inventory.records import Taint
from tests.dra import shapes


def _claim_and_pod(health: str | None, resource_id: str):
    objs = shapes.example("binding-conditions__binding-conditions.yaml")
    tmpl = next(o for o in objs if o["kind"] == "ResourceClaimTemplate")
    pod = copy.deepcopy(next(o for o in objs if o["kind"] == "Pod"))
    claim = shapes.allocate(tmpl, [shapes.result("gpu", "gpu-0", "dra-example-driver-cluster-worker", driver="gpu.example.com")],
                            name="pod0-gpu-7qx2z", namespace="binding-conditions")
    pod["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "pod0-gpu-7qx2z"}],
                     "containerStatuses": [{"name": "ctr0", "allocatedResourcesStatus": [
                         {"name": "claim:gpu", "resources": [{"resourceID": resource_id, "health": health}]}]}]}  # fmt: skip
    c, p = records.parse_object(claim), records.parse_object(pod)
    return c, p, {(c.namespace, c.name): c}


def test_the_kubelet_report_names_the_device_by_driver_pool_and_name():
    c, p, claims = _claim_and_pod("Unhealthy", "gpu.example.com/dra-example-driver-cluster-worker/gpu-0")
    reports = capacity.pod_reports(p, claims)
    assert reports == {c.results[0].device_key: "Unhealthy"}
    assert capacity.device_health((), reports.values()) == "Unhealthy"


def test_a_cdi_resource_id_is_the_claims_only_device():
    c, p, claims = _claim_and_pod("Healthy", "k8s.gpu.example.com/gpu=gpu-0")
    assert capacity.pod_reports(p, claims) == {c.results[0].device_key: "Healthy"}


def test_nvidia_health_taints():
    xid = Taint("gpu.nvidia.com/xid", "79", "NoSchedule")
    info = Taint("gpu.nvidia.com/xid", "13", "None")
    assert capacity.device_health([xid]) == "Unhealthy"
    assert capacity.device_health([info]) is None  # informational XID: nothing said about health
    assert capacity.device_health([Taint("gpu.nvidia.com/unmonitored", None, "NoSchedule")]) == "Unknown"
    assert capacity.device_health([info], ["Healthy"]) == "Healthy"
    assert capacity.device_health([xid], ["Healthy"]) == "Unhealthy"
    assert capacity.device_health([]) is None


def test_claim_device_status_conditions_report_health_and_ready_does_not():

    ready = records.DeviceStatus("gpu.example.com", "p", "gpu-0", None, (records.Condition("Ready", "True", None, None, None),), None, {})
    assert capacity.status_health(ready) is None
    sick = ready._replace(conditions=(records.Condition("Healthy", "False", "XID", None, None),))
    assert capacity.device_health((), (), [sick]) == "Unhealthy"
    assert capacity.status_health(ready._replace(data={"health": "Unknown"})) == "Unknown"
