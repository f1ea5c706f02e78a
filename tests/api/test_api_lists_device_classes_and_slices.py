"""DeviceClasses and ResourceSlices through the API, as stored, with their pages linked; a
slice's devices are the device list filtered by ``slice``."""

from __future__ import annotations

import pytest

from inventory.models import Device, DeviceClass, ResourceSlice

pytestmark = pytest.mark.django_db


def test_device_classes_carry_their_selectors(api, fleet):
    body = api.get("/api/inventory/device-classes/", {"cluster": "mig", "limit": 100}).json()
    stored = {dc.name: dc for dc in DeviceClass.objects.filter(cluster__name="mig")}
    assert {r["name"] for r in body["results"]} == set(stored) and stored
    for r in body["results"]:
        assert r["selectors"] == stored[r["name"]].selectors
        assert r["page"] == f"/clusters/mig/deviceclasses/{r['name']}/"


def test_slices_filter_by_driver_and_node_and_list_their_devices(api, fleet):
    rs = ResourceSlice.objects.filter(cluster__name="aicr", driver="gpu.nvidia.com").order_by("pk").first()
    body = api.get("/api/inventory/resource-slices/", {"cluster": "aicr", "driver": "gpu", "node": rs.node_name}).json()
    assert rs.name in {r["name"] for r in body["results"]}
    assert all("gpu" in r["driver"] and rs.node_name in r["node_name"] for r in body["results"])
    devices = api.get("/api/inventory/devices/", {"slice": rs.name, "limit": 100}).json()
    assert devices["count"] == Device.objects.filter(slice=rs).count() == rs.device_count > 0
