"""Node and device pages show what can still be allocated, each device's taints, health and
sharers, after syncing real-shaped DRA objects."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from inventory.models import Device
from tests.dra import shapes
from tests.dra.test_inventory_json_adds_allocatable_now_taints_health_and_sharers import EXAMPLE_POOL, NODE, _objects

pytestmark = pytest.mark.django_db


@pytest.fixture
def synced(tmp_path):
    shapes.sync(_objects(), tmp_path / "snapshot.json", "dra")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_node_page_shows_allocatable_now_and_not_placements_as_instances(synced, client_in):
    html = client_in.get(reverse("inventory:node", args=["dra", NODE])).content.decode()
    table = html[html.index('id="allocatable-now"'):]
    table = _text(table[: table.index("</table>")])
    assert "1g.18gb 16" in table and "whole GPU 0" in table and "7g.141gb 1" in table
    # the 2 held placements (3g on GPU 0, 1g+me on GPU 2) are instances; the other 98 are possibilities.
    assert re.search(r"MIG instances\s*</div>\s*<div class=\"num\">2<", html)
    assert "Free capacity by MIG profile" not in html
    gpus = _text(html[html.index('id="gpus"'):html.index("</table>", html.index('id="gpus"'))])
    times = "\u00d7"  # the page's multiplication sign
    want = ", ".join(f"{n}{times} {p}" for n, p in [(3, "1g.18gb"), (1, "1g.18gb+me"), (2, "1g.35gb"), (1, "2g.35gb"), (1, "3g.71gb")])
    assert f"room for: {want}" in gpus  # GPU 0 beside its 3g
    assert "example.com/maintenance:NoExecute" in html and "Unhealthy" in html


def test_the_device_page_shows_sharers_capacity_left_and_untolerated_taints(synced, client_in):
    shared = Device.objects.get(cluster__name="dra", pool=EXAMPLE_POOL, name="gpu-0")
    html = _text(client_in.get(shared.get_absolute_url()).content.decode())
    assert "shared-gpu-pod0" in html and "shared-gpu-pod1" in html and "share-0" in html
    assert f"gpu.example.com/memory={(80 - 32) * 2**30}" in html
    assert "Allocated to 2 claims at once" not in html
    drained = Device.objects.get(cluster__name="dra", pool=NODE, name="gpu-1")
    assert "example.com/maintenance" not in _text(client_in.get(drained.get_absolute_url()).content.decode())
    held = Device.objects.get(cluster__name="dra", pool=NODE, name="gpu-0-mig-3g71gb-9-0")
    page = _text(client_in.get(held.get_absolute_url()).content.decode())
    assert "Unhealthy" in page and "team-a/a" in page
    assert "gpu-0-counter-set" in page
