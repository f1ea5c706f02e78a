"""``device_unhealthy``: a real H100 allocated to a running pod is reported unhealthy by the
NVIDIA driver's health taint (a fatal XID, NoSchedule), by the kubelet in the pod's
``allocatedResourcesStatus``, or by the driver in the claim's ``status.devices`` conditions.
An XID taint with effect ``None`` (an application error) is no health finding."""

from __future__ import annotations

from dx import base_cluster, categories, gpu_devices, hold, names, run


def _cluster():
    objs = base_cluster()
    dev = gpu_devices(objs)[0]
    return hold(objs, [dev]), dev


def _device(objs, dev):
    s = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["pool"]["name"] == dev[1])
    return next(d for d in s["spec"]["devices"] if d["name"] == dev[2])


def test_a_fatal_xid_taint_on_an_allocated_gpu_is_device_unhealthy():
    objs, dev = _cluster()
    _device(objs, dev)["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                                     "timeAdded": "2026-11-20T10:30:00Z"}]
    f = run(objs)
    assert categories(f) == ["device_unhealthy"]
    assert {("ResourceClaim", "team-b", "busy-0"), ("Pod", "team-b", "busy-0")} <= names(f[0])
    assert "gpu.nvidia.com/xid=79" in f[0].summary
    assert f[0].since == "2026-11-20T10:30:00Z"


def test_an_application_xid_taint_with_effect_none_is_not_a_health_finding():
    objs, dev = _cluster()
    _device(objs, dev)["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "13", "effect": "None"}]
    assert run(objs) == []


def test_the_kubelets_allocated_resources_status_unhealthy_is_device_unhealthy():
    objs, dev = _cluster()
    p = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == "busy-0")
    p["status"]["containerStatuses"] = [{
        "name": "c", "ready": True, "restartCount": 0, "image": "ubuntu:24.04",
        "state": {"running": {"startedAt": "2026-11-20T10:00:10Z"}},
        "allocatedResourcesStatus": [{"name": "claim:gpu", "resources": [
            {"resourceID": f"gpu.nvidia.com/{dev[1]}/{dev[2]}", "health": "Unhealthy"}]}],
    }]
    f = run(objs)
    assert categories(f) == ["device_unhealthy"]
    assert f[0].evidence["devices"][f"gpu.nvidia.com/{dev[1]}/{dev[2]}"][0]["source"] == "pod allocatedResourcesStatus"


def _status(objs, dev, conditions, data=None):
    c = next(o for o in objs if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "busy-0")
    entry = {"driver": "gpu.nvidia.com", "pool": dev[1], "device": dev[2], "conditions": conditions}
    if data is not None:
        entry["data"] = data
    c["status"]["devices"] = [entry]
    return objs


def test_a_false_healthy_condition_in_the_claims_device_status_is_device_unhealthy():
    objs, dev = _cluster()
    f = run(_status(objs, dev, [{"type": "Healthy", "status": "False", "reason": "XidError",
                                 "message": "Xid 79: GPU has fallen off the bus",
                                 "lastTransitionTime": "2026-11-20T10:40:00Z"}]))
    assert categories(f) == ["device_unhealthy"]
    assert "claim status.devices" in f[0].summary and f[0].since == "2026-11-20T10:40:00Z"


def test_unhealthy_in_the_device_status_data_is_device_unhealthy():
    objs, dev = _cluster()
    assert categories(run(_status(objs, dev, [], data={"health": "Unhealthy"}))) == ["device_unhealthy"]


def test_a_false_ready_condition_says_prepared_not_health():
    objs, dev = _cluster()
    assert run(_status(objs, dev, [{"type": "Ready", "status": "False", "reason": "NotPrepared", "message": "",
                                    "lastTransitionTime": "2026-11-20T10:40:00Z"}])) == []


def test_a_healthy_report_is_no_finding():
    objs, dev = _cluster()
    assert run(_status(objs, dev, [{"type": "Healthy", "status": "True", "reason": "Ok", "message": "",
                                    "lastTransitionTime": "2026-11-20T10:40:00Z"}])) == []
