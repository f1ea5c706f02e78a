"""The allocated-but-idle page on the demo: idle GPUs a claim holds, grouped by namespace with
GPU-hours (estimates from stored values, no Prometheus), and busy GPUs no claim holds."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.dcgm import utilization_percent
from inventory.models import AllocationResult, Device

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())


def _idle_held(threshold):
    out = set()
    for r in AllocationResult.objects.filter(device__isnull=False).select_related("device", "claim"):
        u = utilization_percent(r.device.metrics)
        if u is not None and u < threshold:
            out.add((r.claim.namespace, r.claim.name, r.device.pk))
    return out


def test_idle_claimed_devices_are_grouped_by_namespace_with_estimated_gpu_hours(client_in, demo, django_assert_max_num_queries):
    want = _idle_held(5.0)
    assert want, "the demo holds idle GPUs"
    with django_assert_max_num_queries(12):
        html = client_in.get(reverse("inventory:telemetry-idle")).content.decode()
    for ns, claim, pk in want:
        assert f">{claim}</a>" in html and reverse("inventory:telemetry-device", args=[pk]) in html
        assert f"/ {ns} <span" in html
    assert "estimate" in html and "measured</span>" not in html
    assert int(re.search(r"Idle allocated devices</div><div class=\"num\">(\d+)", html).group(1)) == len(want)
    # Pods the claim is reserved for, and claim pages, are linked.
    assert "/claims/pods/" in html and "/claims/demo/" in html


def test_the_threshold_in_the_url_changes_what_counts_as_idle(client_in, demo):
    counts = {}
    for threshold in ("5", "99.5"):
        html = client_in.get(reverse("inventory:telemetry-idle"), {"threshold": threshold}).content.decode()
        counts[threshold] = int(re.search(r"Idle allocated devices</div><div class=\"num\">(\d+)", html).group(1))
        assert counts[threshold] == len(_idle_held(float(threshold)))
    # Busy GPUs of the real trace run at 95-99 %: under a 99.5 % threshold they count as idle.
    assert counts["5"] < counts["99.5"]


def test_busy_devices_without_a_claim_are_listed(client_in, demo, django_assert_max_num_queries):
    busy = [d for d in Device.objects.filter(allocations__isnull=True) if (utilization_percent(d.metrics) or 0) > 50]
    assert busy
    with django_assert_max_num_queries(12):
        html = client_in.get(reverse("inventory:telemetry-idle"), {"cluster": "demo"}, HTTP_HX_REQUEST="true").content.decode()
    section = html.split("Busy, no claim")[1]
    for d in busy:
        assert reverse("inventory:telemetry-device", args=[d.pk]) in section
    assert "<html" not in html
