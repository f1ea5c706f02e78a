"""The two CEL runtimes behind ``inventory.cel`` agree: Google's cel-expr-python (used for
selectors without Kubernetes extension functions, capacity reads or macros) and celpy give the
same match and the same error-or-not on the real slices' devices, for the real selectors of
the NVIDIA and example drivers and guarded and unguarded attribute reads."""

from __future__ import annotations

import pytest

from inventory import cel_runtime
from inventory.cel import MAX_TREE_DEPTH
from inventory.parse import parse_resource_slice
from inventory.snapshot import load_path
from tests.conftest import FIXTURES, H100_SLICES

pytestmark = pytest.mark.skipif(not cel_runtime.CPP_AVAILABLE, reason="cel-expr-python is not installed")

SLICES = [H100_SLICES, FIXTURES / "k8s/resourceslices/dra-example-driver-mock-gpus.v1.yaml",
          FIXTURES / "k8s/resourceslices/vks-2x-grid-a100-10c-vgpu-gpu-slices.v1.yaml"]
DEVICES = [d for p in SLICES for o in load_path(p).objects if o.get("kind") == "ResourceSlice"
           for d in parse_resource_slice(o).devices]
SELECTORS = [
    # real: the NVIDIA driver's and GPU Operator's DeviceClasses, the example driver's demos
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel'",
    "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'",
    'device.attributes["gpu.nvidia.com"].productName == "NONEXISTENT-GPU-XYZ"',
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    # reads that fail on some devices, guarded and not; a domain the device has no attribute in
    "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')",
    "'productName' in device.attributes['gpu.nvidia.com'] && device.attributes['gpu.nvidia.com'].productName.contains('80GB')",
    "'x' in device.attributes['other.example.com']",
    "device.attributes['gpu.nvidia.com'].index >= 4 || device.allowMultipleAllocations",
    "device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'",
    "device.driver",
]


def _both(expr):
    cpp, _ = cel_runtime.compile_program(expr, MAX_TREE_DEPTH)
    celpy, _ = cel_runtime.compile_program(expr, MAX_TREE_DEPTH, backend="celpy")
    assert isinstance(cpp, cel_runtime.CppProgram) and not isinstance(celpy, cel_runtime.CppProgram)
    return cpp, celpy


@pytest.mark.parametrize("expr", SELECTORS)
def test_both_runtimes_give_the_same_answer_on_every_real_device(expr):
    cpp, celpy = _both(expr)
    assert len(DEVICES) > 20
    for d in DEVICES:
        act = cel_runtime.DeviceActivation(d)
        a, b = cel_runtime.evaluate(cpp, act), cel_runtime.evaluate(celpy, act)
        assert (a[0], a[1] is None) == (b[0], b[1] is None), (d.pool, d.name, a, b)


def test_selectors_calling_kubernetes_functions_or_reading_capacity_stay_on_celpy():
    for expr in ("device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0",
                 "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
                 "[1, 2].all(x, x > 0)"):
        program, _ = cel_runtime.compile_program(expr, MAX_TREE_DEPTH)
        assert not isinstance(program, cel_runtime.CppProgram)
