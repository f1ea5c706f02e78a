"""A pod whose real H100 was prepared but whose container cannot be created because a path
the CDI spec mounts is not on the host (runc's ``error mounting``, a wrong driver root) is
``cdi_spec_invalid``; the runtime failing to resolve the CDI device stays ``cdi_injection_failed``."""

from __future__ import annotations

from dx import base_cluster, categories, gpu_devices, gpu_plugin_pod, hold, names, run

LIB = "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06"
MOUNT_ERROR = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed:"
    f' unable to start container process: error during container init: error mounting "{LIB}" to rootfs at'
    f' "/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06": stat {LIB}: no such file or directory: unknown'
)


def _cluster(reason: str, message: str):
    objs = base_cluster()
    dev = gpu_devices(objs)[0]
    objs = [*hold(objs, [dev]), gpu_plugin_pod(dev[0], env={"NVIDIA_DRIVER_ROOT": "/run/nvidia/driver"})]
    p = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == "busy-0")
    p["status"]["phase"] = "Pending"
    p["status"]["containerStatuses"] = [{"name": "c", "ready": False, "restartCount": 0, "image": "ubuntu:24.04",
                                         "state": {"waiting": {"reason": reason, "message": message}}}]
    return objs


def test_a_missing_host_path_in_the_cdi_spec_is_cdi_spec_invalid():
    f = run(_cluster("RunContainerError", MOUNT_ERROR))
    assert categories(f) == ["cdi_spec_invalid"]
    assert f[0].evidence["host_path"] == LIB
    assert "NVIDIA_DRIVER_ROOT=/run/nvidia/driver" in f[0].summary
    assert {("Pod", "team-b", "busy-0"), ("ResourceClaim", "team-b", "busy-0"),
            ("Pod", "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-kubelet-plugin-7x2kq")} <= names(f[0])


def test_an_unresolvable_cdi_device_is_not_cdi_spec_invalid():
    msg = ("failed to create containerd container: CDI device injection failed: unresolvable CDI devices"
           " k8s.gpu.nvidia.com/claim=5f1c0d2e-gpu-0")
    assert "cdi_spec_invalid" not in categories(run(_cluster("CreateContainerError", msg)))


def test_a_container_error_that_names_no_cdi_edit_is_not_cdi_spec_invalid():
    msg = 'failed to create containerd container: error unpacking image: failed to extract layer: no space left on device'
    assert run(_cluster("CreateContainerError", msg)) == []
