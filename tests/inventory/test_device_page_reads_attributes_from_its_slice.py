"""A device's attributes are not copied onto its row: the device page reads them from the
ResourceSlice's stored raw (Device.published), as the driver published them."""

from __future__ import annotations

import pytest

from inventory.models import Device, ResourceSlice
from inventory.snapshot import load_path
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db


def test_the_device_page_lists_every_attribute_the_slice_publishes(sync_snapshot, client_in):
    sync_snapshot(H100_SLICES, "h100")
    raw = next(s for s in load_path(H100_SLICES).objects if s["spec"]["driver"] == "gpu.nvidia.com")
    published = raw["spec"]["devices"][0]
    dev = Device.objects.get(slice__name=raw["metadata"]["name"], name=published["name"])
    html = client_in.get(dev.get_absolute_url()).content.decode()
    for key, value in published["attributes"].items():
        assert (key if "/" in key else f"gpu.nvidia.com/{key}") in html
        assert str(next(iter(value.values()))) in html
    assert dev.published().attributes["gpu.nvidia.com/uuid"] == published["attributes"]["uuid"]["string"] == dev.uuid


def test_a_device_its_slice_no_longer_lists_says_so(sync_snapshot, client_in):
    sync_snapshot(H100_SLICES, "h100")
    dev = Device.objects.filter(driver="gpu.nvidia.com").first()
    stored = ResourceSlice.objects.get(pk=dev.slice_id)
    stored.raw["spec"]["devices"] = [d for d in stored.raw["spec"]["devices"] if d["name"] != dev.name]
    stored.save(update_fields=["raw"])
    assert Device.objects.get(pk=dev.pk).published() is None
    html = client_in.get(dev.get_absolute_url()).content.decode()
    assert "no longer lists this device" in html
