"""The claims list and the stuck queue sort on every column through django-tables2
(``?sort=<column>``, ``-`` for descending), keep their filters and labelled rows while sorted,
and their text filters match part of a name."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from claims.models import Finding
from claims.tables import ClaimTable, FindingTable
from inventory.models import AllocationResult, ResourceClaim

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())


def _claims(client, **params):
    resp = client.get(reverse("claims:list"), params)
    assert resp.status_code == 200
    return resp, resp.context["claims"]


def _worst(c):
    ranks = [f.severity_rank for f in Finding.objects.open().filter(claim=c)]
    return min(ranks) if ranks else 99


def _first_device(c):
    names = sorted((r.pool, r.device_name) for r in AllocationResult.objects.filter(claim=c))
    return names[0][1] if names else None


KEYS = {
    "claim": lambda c: (c.namespace, c.name),
    "cluster": lambda c: c.cluster.name,
    "state": lambda c: c.state,
    "node": lambda c: c.node_name,
    "age": lambda c: -c.created.timestamp(),
    "findings": _worst,
    "requests": lambda c: (c.requests or [{}])[0].get("device_class") or "~",
    "devices": lambda c: _first_device(c) or "~",
}


@pytest.mark.parametrize("column", [c for c in ClaimTable.base_columns])
def test_every_claim_column_sorts_both_ways(client_in, demo, column):
    assert column in KEYS, f"a test order for {column}"
    for descending in (False, True):
        resp, rows = _claims(client_in, sort=("-" if descending else "") + column)
        assert len(rows) == ResourceClaim.objects.count() > 10
        keys = [KEYS[column](c) for c in rows]
        present = [k for k in keys if k != "~" and k != 99]
        assert present == sorted(present, reverse=descending), column
        html = resp.content.decode()
        assert f'aria-sort="{"descending" if descending else "ascending"}"' in html
        assert 'data-label="Claim"' in html  # the phone's labelled rows stay


def test_a_sorted_claims_list_keeps_its_filters(client_in, demo):
    _, rows = _claims(client_in, namespace="team", sort="-age")  # oldest first
    assert rows and all("team" in c.namespace for c in rows)
    assert [c.created for c in rows] == sorted(c.created for c in rows)
    html = client_in.get(reverse("claims:list"), {"namespace": "team"}).content.decode()
    assert "namespace=team&amp;sort=claim" in html or "sort=claim&amp;namespace=team" in html


STUCK_KEYS = {
    "severity": lambda f: f.severity_rank,
    "category": lambda f: f.category,
    "object": lambda f: (f.kind, f.namespace, f.name),
    "cluster": lambda f: f.cluster.name,
    "stuck_for": lambda f: -f.since.timestamp() if f.since else None,
    "finding": lambda f: f.summary,
    "involved": lambda f: ((f.involved or [{}, {}])[1:2] or [{}])[0].get("kind") or None,
}


@pytest.mark.parametrize("column", [c for c in FindingTable.base_columns])
def test_every_stuck_column_sorts_both_ways(client_in, demo, column):
    assert column in STUCK_KEYS, f"a test order for {column}"
    for descending in (False, True):
        resp = client_in.get(reverse("claims:stuck"), {"sort": ("-" if descending else "") + column})
        rows = resp.context["findings"]
        assert len(rows) == Finding.objects.open().count() > 5
        keys = [k for k in (STUCK_KEYS[column](f) for f in rows) if k is not None]
        assert keys == sorted(keys, reverse=descending), column


def test_the_stuck_queue_without_a_sort_is_most_severe_then_longest_stuck(client_in, demo):
    rows = client_in.get(reverse("claims:stuck")).context["findings"]
    assert [f.pk for f in rows] == list(Finding.objects.open().stuck_order().values_list("pk", flat=True))


def test_text_filters_match_part_of_a_name(client_in, demo):
    r = AllocationResult.objects.filter(device__type="mig").select_related("claim").first()
    part = r.device_name.split("-mig-")[1][:6]  # e.g. "1g18gb"
    _, rows = _claims(client_in, q=part)
    assert r.claim in rows and all(
        part in c.name or part in c.namespace or AllocationResult.objects.filter(claim=c, device_name__icontains=part).exists()
        for c in rows
    )
    rows = client_in.get(reverse("claims:stuck"), {"q": "dealloc"}).context["findings"]
    assert rows and all("dealloc" in f.category for f in rows)
