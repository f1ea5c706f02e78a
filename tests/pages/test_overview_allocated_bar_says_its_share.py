"""The overview's allocated-devices bar says the share it draws: allocated of the allocated
and free devices (a cluster with one claim of sixteen H100s is not "100")."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.conftest import CASES

pytestmark = pytest.mark.django_db


def test_the_bar_title_and_width_are_the_allocated_share(client_in, sync_snapshot):
    sync_snapshot(CASES / "healthy-cluster-h100/snapshot", name="h100")
    resp = client_in.get(reverse("inventory:overview"))
    totals = resp.context["totals"]
    assert 0 < totals["allocated"] and 0 < totals["free"]
    want = round(100 * totals["allocated"] / (totals["allocated"] + totals["free"]))
    bar = re.search(r'<div class="bar" title="(\d+) % [^"]*"><span style="width:(\d+)%"', resp.content.decode())
    assert bar and (int(bar.group(1)), int(bar.group(2))) == (want, want)
    assert want < 100
