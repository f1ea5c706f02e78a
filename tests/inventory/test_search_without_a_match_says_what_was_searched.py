"""No match: the page names the term and what it was compared with. An empty query explains
what the box accepts and runs no search."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_no_match_names_the_term_and_every_kind_searched(client_in, demo_clusters):
    resp = client_in.get(reverse("inventory:search"), {"q": "no-such-thing-7f7f"})
    assert resp.status_code == 200 and resp.context["result"].total == 0
    html = resp.content.decode()
    assert "Nothing matches" in html and "no-such-thing-7f7f" in html
    for what in ("UUID", "claim names", "pod names", "node names"):
        assert what in html


def test_an_empty_query_explains_the_box_without_searching(client_in, demo_clusters):
    with CaptureQueriesContext(connection) as ctx:
        resp = client_in.get(reverse("inventory:search"), {"q": "   "})
    assert resp.status_code == 200 and resp.context["result"].total == 0
    searched = [q["sql"] for q in ctx.captured_queries
                if any(f'"inventory_{t}"' in q["sql"] for t in ("device", "resourceclaim", "pod", "node"))]
    assert searched == []
    html = resp.content.decode()
    assert "Nothing matches" not in html and "namespace/name" in html


@pytest.mark.parametrize("q", ["\x00", "gpu\x00", "\x00\x00/x"])
def test_a_null_character_matches_only_what_holds_one(client_in, demo_clusters, q):
    """Stored text holds U+FFFD where the cluster sent NUL (``inventory.bulk``): the query is
    compared the same way, so it matches nothing here instead of everything."""
    resp = client_in.get(reverse("inventory:search"), {"q": q})
    assert resp.status_code == 200
    assert resp.context["result"].total == 0
