"""Every category has a runbook page, rendered from Markdown and sanitized; cluster text is escaped."""

from __future__ import annotations

import pytest
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name, expected_category

from claims.diagnosis import CATEGORIES
from claims.models import Finding
from claims.runbooks import render_markdown

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_renders_its_runbook(client_in, category, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        resp = client_in.get(reverse("claims:runbook", args=[category]))
    assert resp.status_code == 200
    body = resp.content.decode()
    assert f"<h1>{category}</h1>" in body
    assert "<h2>" in body  # Markdown became HTML, not escaped text


def test_unknown_category_is_404(client_in):
    assert client_in.get(reverse("claims:runbook", args=["not_a_category"])).status_code == 404


def test_html_in_markdown_is_sanitized():
    html = render_markdown('# t\n\n<script>alert(1)</script>\n\n<a href="javascript:x()" onclick="y()">l</a>\n\n<img src=x onerror=alert(1)>')
    assert "<script" not in html and "onclick" not in html and "javascript:" not in html and "onerror" not in html
    assert "<h1>t</h1>" in html


def test_finding_link_lists_the_involved_objects_escaped(client_in, sync_snapshot):
    case = next(c for c in CASE_DIRS if expected_category(c) == "capacity_exhausted")
    sync_snapshot(case / "snapshot", name=cluster_name(case))
    f = Finding.objects.get(category="capacity_exhausted")
    f.involved = [*f.involved, {"kind": "Pod", "namespace": "ns", "name": "<script>x</script>"}]
    f.save(update_fields=["involved"])
    body = client_in.get(f"{f.get_runbook_url()}?finding={f.pk}").content.decode()
    for o in f.involved[:-1]:
        assert o["name"] in body
    assert "<script>x</script>" not in body and "&lt;script&gt;x&lt;/script&gt;" in body
