"""CEL selectors from real DeviceClasses and claims evaluated on real ResourceSlices."""

from __future__ import annotations

import pytest
from diag_helpers import h100_slices, load_yaml, nvidia_classes, of_kind

from inventory.cel import SelectorError, classes_matching, compile_selector, device_matches, evaluate_device
from inventory.normalize import normalize
from inventory.parse import parse_resource_slice


def _devices(objs):
    return [d for o in objs for d in parse_resource_slice(normalize(o)).devices]


def _class_map(classes):
    return {c["metadata"]["name"]: [s["cel"]["expression"] for s in c["spec"].get("selectors", [])] for c in classes}


def test_real_gpu_class_matches_every_real_h100_and_mig_class_none():
    devices = _devices(h100_slices())
    classes = _class_map(nvidia_classes())
    assert len(devices) == 16
    assert all(classes_matching(d, classes) == ["gpu.nvidia.com"] for d in devices)


def test_memory_selector_with_quantity_compare_separates_80gb_from_100gi():
    devices = _devices(h100_slices())
    ge_80 = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
    ge_79 = "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('79Gi'))"
    assert not any(device_matches(d, [ge_80]) for d in devices)  # 81559Mi < 81920Mi
    assert all(device_matches(d, [ge_79]) for d in devices)


def test_real_example_driver_cel_selector_template_matches_mock_gpus():
    template = of_kind(load_yaml("k8s/claims-and-templates/cel-selector__cel-selector.yaml"), "ResourceClaimTemplate")[0]
    exprs = [s["cel"]["expression"] for s in template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"]]
    devices = _devices(of_kind(load_yaml("k8s/resourceslices/dra-example-driver-mock-gpus.v1.yaml"), "ResourceSlice"))
    matched = [d for d in devices if device_matches(d, exprs)]
    assert matched and all(d.attr("model") == "LATEST-GPU-MODEL" for d in matched)


def test_real_nomatch_selector_matches_no_h100():
    claim = of_kind(load_yaml("k8s/claims-and-templates/gpu-cel-nomatch.yaml"), "ResourceClaimTemplate")
    exprs = [s["cel"]["expression"] for r in claim[0]["spec"]["spec"]["devices"]["requests"]
             for s in r["exactly"]["selectors"]]
    assert not any(device_matches(d, exprs) for d in _devices(h100_slices()))


def test_mig_selector_with_missing_capacity_is_a_runtime_error_on_whole_gpus():
    tmpl = of_kind(load_yaml("k8s/claims-and-templates/gpu-simple-mig.yaml"), "ResourceClaimTemplate")[0]
    exprs = [s["cel"]["expression"] for s in tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"]]
    dev = _devices(h100_slices())[0]
    result = evaluate_device(dev, exprs)
    assert not result.matched and "multiprocessors" in (result.error or "")
    with pytest.raises(SelectorError):
        device_matches(dev, exprs)


def test_version_attributes_compare_as_semver():
    dev = _devices(h100_slices())[0]  # driverVersion 580.105.8, cudaComputeCapability 9.0.0
    assert device_matches(dev, ["device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('580.95.5'))"])
    assert device_matches(dev, ["device.attributes['gpu.nvidia.com'].cudaComputeCapability.major() == 9"])
    assert device_matches(dev, ["device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$')"])


def test_unknown_domain_reads_as_empty_map_not_error():
    dev = _devices(h100_slices())[0]
    assert evaluate_device(dev, ["'model' in device.attributes['gpu.example.com']"]).error is None


def test_selector_that_does_not_compile_raises_selector_error_naming_it():
    with pytest.raises(SelectorError, match="does not compile"):
        compile_selector("device.driver == ")


def test_compiled_programs_are_cached_by_expression():
    assert compile_selector("device.driver == 'x'") is compile_selector("device.driver == 'x'")


def test_non_bool_result_is_a_runtime_error():
    dev = _devices(h100_slices())[0]
    assert evaluate_device(dev, ["device.driver"]).error
