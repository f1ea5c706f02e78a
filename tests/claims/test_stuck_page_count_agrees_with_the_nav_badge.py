"""The stuck queue says how many of its open findings are critical or warning: the number the
navigation's badge shows, so the two never seem to disagree."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name, expected_category

from claims.models import Finding

pytestmark = pytest.mark.django_db


def test_the_page_names_the_badge_number_beside_its_own_count(client_in, sync_snapshot):
    for case in [c for c in CASE_DIRS if expected_category(c) != "none"]:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    open_ = Finding.objects.open()
    # Make one finding info (as the telemetry rules report), so the two numbers differ.
    Finding.objects.filter(pk=open_.order_by("pk").first().pk).update(severity="info", severity_rank=2)
    actionable = open_.filter(severity__in=["critical", "warning"]).count()
    assert open_.count() > actionable > 0
    body = client_in.get(reverse("claims:stuck")).content.decode()
    badge = re.search(r'id="nav-stuck"[^>]*>Stuck <span class="badge critical">(\d+)</span>', body)
    assert badge and int(badge.group(1)) == actionable
    assert f"{open_.count()} open findings, " in body
    assert f">{actionable} critical or warning</span>" in body
