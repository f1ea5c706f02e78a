"""Pods asking for an extended resource that a DeviceClass serves (spec.extendedResourceName, or
the implicit deviceclass.resource.kubernetes.io/<class> name) are DRA requests."""

from __future__ import annotations

from inventory import capacity, records
from tests.dra import shapes


def _class(name, extended=None):
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": {}}
    if extended:
        obj["spec"]["extendedResourceName"] = extended
    return records.parse_object(obj)


def test_the_implicit_class_name_maps_and_a_plain_extended_resource_needs_a_class():
    pods = {p["metadata"]["name"]: records.parse_object(p) for p in shapes.example("extended-resource-request__extended-resource-request.yaml") if p["kind"] == "Pod"}
    example = _class("gpu.example.com")
    assert capacity.extended_resource_classes(pods["pod0"], [example]) == {
        "deviceclass.resource.kubernetes.io/gpu.example.com": "gpu.example.com"}
    assert capacity.extended_resource_classes(pods["pod1"], [example]) == {}  # example.com/gpu: a device plugin's
    assert capacity.extended_resource_classes(pods["pod1"], [_class("gpu.example.com", "example.com/gpu")]) == {
        "example.com/gpu": "gpu.example.com"}


def test_nvidias_mig_class_serves_its_extended_resource():
    objs = shapes.example("nvidia-extended-resources-mig-1g-12gb.yaml")
    dc = records.parse_object(next(o for o in objs if o["kind"] == "DeviceClass"))
    pod = records.parse_object(next(o for o in objs if o["kind"] == "Pod"))
    assert capacity.extended_resource_classes(pod, [dc]) == {"nvidia.com/mig-1g.12gb": "mig-1g-12gb.gpu.nvidia.com"}
