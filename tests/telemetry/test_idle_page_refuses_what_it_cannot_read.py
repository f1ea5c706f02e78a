"""The allocated-but-idle page names a parameter it cannot read (an unknown cluster, a
threshold that is no number from 0 to 100, an unknown window or end) and shows nothing,
instead of the default's numbers or the whole fleet's under the link's name."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _idle_count(html: str) -> int | None:
    found = re.search(r"Idle allocated devices</div><div class=\"num\">(\d+)", html)
    return int(found.group(1)) if found else None


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())


def test_valid_values_are_applied(client_in, demo):
    url = reverse("inventory:telemetry-idle")
    assert _idle_count(client_in.get(url).content.decode())
    html = client_in.get(url, {"cluster": "demo", "threshold": "99.5", "busy": "100", "window": "7d",
                               "end": "2026-01-01T00:00:00Z"}).content.decode()
    assert _idle_count(html) is not None and "Not understood" not in html


@pytest.mark.parametrize(("param", "value", "why"), [
    ("cluster", "nope", "no stored cluster has this name"),
    ("threshold", "nan", "Enter a number."),
    ("threshold", "150", "less than or equal to 100"),
    ("busy", "lots", "Enter a number."),
    ("window", "1y", "Select a valid choice"),
    ("end", "yesterday", "not an ISO 8601 time"),
])  # fmt: skip
def test_a_value_it_cannot_read_is_named_and_nothing_is_shown(client_in, demo, param, value, why):
    for htmx in ({}, {"HTTP_HX_REQUEST": "true"}):
        resp = client_in.get(reverse("inventory:telemetry-idle"), {param: value}, **htmx)
        assert resp.status_code == 200
        html = resp.content.decode()
        assert f"{param}=&#x27;{value}&#x27;: " in html and why in html
        assert _idle_count(html) is None and "Busy, no claim" not in html
