"""A device chart's empty panels say why: a MIG instance has no power or temperature series of
its own (DCGM reports those per physical GPU); a panel with no line in the window says so."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.models import AllocationResult, DeviceType

pytestmark = pytest.mark.django_db


def _annotations(client, device):
    fig = json.loads(client.get(reverse("inventory:telemetry-device-chart-json", args=[device.pk])).content)
    return [a["text"] for a in fig["layout"]["annotations"]]


def test_a_mig_instance_chart_points_to_the_gpu_for_power_and_temperature(client_in, tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())
    held = AllocationResult.objects.filter(cluster__name="demo", device__type=DeviceType.MIG).select_related("device")
    mig = held.first().device
    notes = [t for t in _annotations(client_in, mig) if "per physical GPU" in t]
    assert len(notes) == 2  # power and temperature
    gpu = AllocationResult.objects.filter(cluster__name="demo", device__type=DeviceType.GPU).select_related("device").first().device
    assert not [t for t in _annotations(client_in, gpu) if "per physical GPU" in t or "no series" in t]
