"""Memoized CEL results never leak between devices that differ in a fact a selector reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from inventory.cel import classes_matching, evaluate_device
from inventory.normalize import normalize
from inventory.parse import Device, parse_resource_slice

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SLICES = "k8s/resourceslices/aicr-eks-2x8-h100-gpu-and-computedomain-slices.v1.yaml"
CLASSES = "k8s/deviceclasses/gpu-operator-golden-dra-driver-passthrough.v1.yaml"


def _objects(rel: str) -> list[dict]:
    out: list[dict] = []
    for doc in yaml.safe_load_all((FIXTURES / rel).read_text(encoding="utf-8")):
        if isinstance(doc, dict):
            out.extend(doc["items"] if doc.get("kind", "").endswith("List") else [doc])
    return out


def _h100_devices() -> list[Device]:
    slices = [o for o in _objects(SLICES) if o.get("kind") == "ResourceSlice"]
    gpu = [o for o in slices if o["spec"]["driver"] == "gpu.nvidia.com"]
    return [d for o in gpu for d in parse_resource_slice(normalize(o)).devices]


def _class_map() -> dict[str, list[str]]:
    return {
        c["metadata"]["name"]: [s["cel"]["expression"] for s in c["spec"].get("selectors", [])]
        for c in _objects(CLASSES)
        if c.get("kind") == "DeviceClass"
    }


def _with_attrs(device: Device, **changes: object) -> Device:
    attrs = dict(device.attributes)
    for short, value in changes.items():
        if value is None:
            attrs.pop(f"{device.driver}/{short}", None)
        else:
            attrs[f"{device.driver}/{short}"] = value
    return dataclasses.replace(device, attributes=attrs)


def test_device_classes_follow_the_type_attribute_after_the_gpu_shape_is_memoized():
    gpu = _h100_devices()[0]
    classes = _class_map()
    as_gpu = classes_matching(gpu, classes)
    assert "gpu.nvidia.com" in as_gpu
    as_mig = classes_matching(_with_attrs(gpu, type="mig"), classes)
    assert "gpu.nvidia.com" not in as_mig
    assert as_mig != as_gpu
    assert classes_matching(gpu, classes) == as_gpu


def test_selector_result_follows_an_attribute_value_it_reads_after_memoizing():
    first, second = _h100_devices()[:2]
    expr = f"device.attributes['gpu.nvidia.com'].uuid == '{first.uuid}'"
    assert evaluate_device(first, [expr]).matched
    assert not evaluate_device(second, [expr]).matched
    assert evaluate_device(first, [expr]).matched


def test_a_bool_attribute_and_an_int_attribute_of_equal_python_value_are_told_apart():
    gpu = _h100_devices()[0]
    expr = "device.attributes['gpu.nvidia.com'].shared == true"
    assert evaluate_device(_with_attrs(gpu, shared=True), [expr]).matched
    # CEL compares an int with a bool as unequal or as an error, never as true (Python: 1 == True).
    assert not evaluate_device(_with_attrs(gpu, shared=1), [expr]).matched


def test_a_missing_attribute_is_a_runtime_error_even_after_the_present_one_was_memoized():
    gpu = _h100_devices()[0]
    expr = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')"
    assert evaluate_device(gpu, [expr]).matched
    result = evaluate_device(_with_attrs(gpu, productName=None), [expr])
    assert not result.matched and result.error


def test_a_capacity_a_selector_reads_changes_the_memoized_class_answer():
    gpu = _h100_devices()[0]
    classes = {"big": ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('100Gi')) >= 0"]}
    assert classes_matching(gpu, classes) == []
    bigger = dataclasses.replace(gpu, capacity={**gpu.capacity, "gpu.nvidia.com/memory": "143771Mi"})
    assert classes_matching(bigger, classes) == ["big"]


def test_classes_matching_returns_a_list_the_caller_may_change():
    gpu = _h100_devices()[0]
    classes = _class_map()
    first = classes_matching(gpu, classes)
    first.append("not-a-class")
    assert "not-a-class" not in classes_matching(gpu, classes)


def test_parsed_devices_equal_devices_built_by_the_dataclass_constructor():
    for device in _h100_devices():
        rebuilt = Device(**{f.name: getattr(device, f.name) for f in dataclasses.fields(Device)})
        assert rebuilt == device
        assert repr(rebuilt) == repr(device)
