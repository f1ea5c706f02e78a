"""The header search finds devices by UUID, whole or partial, in any case: a GPU's UUID finds
the GPU and its MIG instances (their parentUUID); a MIG UUID opens that instance."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Device, DeviceType
from inventory.search import LIMIT

pytestmark = pytest.mark.django_db


def test_a_parent_gpu_uuid_fragment_finds_the_gpu_and_its_mig_instances(client_in, demo_clusters):
    mig = Device.objects.filter(type=DeviceType.MIG).exclude(parent_uuid="").order_by("pk").first()
    fragment = mig.parent_uuid[4:17].lower()  # after "GPU-": as a user pastes part of it
    want = sorted(d.pk for d in Device.objects.all()
                  if fragment.lower() in d.uuid.lower() or fragment.lower() in d.parent_uuid.lower())  # fmt: skip
    assert len(want) > 1 and mig.pk in want
    resp = client_in.get(reverse("inventory:search"), {"q": fragment.upper()})
    assert resp.status_code == 200
    devices = next(g for g in resp.context["result"].groups if g.kind == "device")
    assert devices.count == len(want)
    shown = [d.pk for d in devices.objects]
    assert set(shown) <= set(want) and len(shown) == min(len(want), LIMIT)
    html = resp.content.decode()
    assert reverse("inventory:device", args=[mig.pk]) in html and mig.parent_uuid in html


def test_a_whole_mig_uuid_opens_that_instance(client_in, demo_clusters):
    mig = Device.objects.filter(type=DeviceType.MIG).exclude(uuid="").order_by("-pk").first()
    assert Device.objects.filter(uuid__iexact=mig.uuid).count() == 1
    resp = client_in.get(reverse("inventory:search"), {"q": mig.uuid.lower()})
    assert resp.status_code == 302 and resp["Location"] == mig.get_absolute_url()
