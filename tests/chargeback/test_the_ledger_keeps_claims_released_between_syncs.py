"""The ledger the syncs keep: a claim deleted or deallocated by the next sync ends when it
was last seen allocated, and still counts in a window that covers it; one still held stays open."""

from __future__ import annotations

import io
import json

import pytest
from chargeback_helpers import CASES, load_case
from django.core.management import call_command

from claims.ledger.models import ChargebackHolding
from inventory.kube import parse_time
from inventory.snapshot import load_path
from tests.conftest import write_list

CASE = "healthy-cluster-h100"


def _deleted(objects, name):
    return [o for o in objects if not (o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == name)]


def _deallocated(objects, name):
    """The claim kept, its ``status`` gone (deallocated: pending again) and, as the API server
    does on any write, its ``resourceVersion`` moved on."""
    out = []
    for o in objects:
        if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == name:
            o = {k: v for k, v in o.items() if k != "status"}
            o["metadata"] = {**o["metadata"], "resourceVersion": str(int(o["metadata"].get("resourceVersion") or 0) + 1)}
        out.append(o)
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("release", [_deleted, _deallocated])
def test_a_claim_released_after_a_sync_ends_at_its_last_sighting(sync_snapshot, tmp_path, release):
    claims, _, first_time = load_case(CASE)
    sync_snapshot(CASES / CASE / "snapshot", "h100")
    held = ChargebackHolding.objects.filter(cluster__name="h100")
    assert held.count() == sum(len(c.results) for c in claims if c.allocated)
    assert not held.filter(end__isnull=False).exists()
    assert set(held.values_list("last_seen", flat=True)) == {first_time}

    gone = min((c for c in claims if c.allocated), key=lambda c: c.allocation_timestamp)  # held longest
    objects = release(load_path(CASES / CASE / "snapshot").objects, gone.name)
    sync_snapshot(write_list(tmp_path / "later.json", objects), "h100")

    closed = list(held.filter(end__isnull=False))
    assert [(r.namespace, r.claim_name) for r in closed] == [(gone.namespace, gone.name)] * len(gone.results)
    assert all(r.end == first_time and r.start == parse_time(gone.allocation_timestamp) for r in closed)
    assert held.filter(end__isnull=True).count() == sum(len(c.results) for c in claims if c.allocated) - len(gone.results)

    out = io.StringIO()
    call_command("chargeback", "--cluster", "h100", "--since", "2026-11-20T00:00:00Z", "--until", first_time.isoformat(), stdout=out)
    ns = {n["namespace"]: n for n in json.loads(out.getvalue())["namespaces"]}
    since = parse_time("2026-11-20T00:00:00Z")
    for namespace in {c.namespace for c in claims if c.allocated}:
        want = sum(
            len(c.results) * (first_time - max(since, parse_time(c.allocation_timestamp))).total_seconds() / 3600
            for c in claims if c.allocated and c.namespace == namespace
        )
        assert ns[namespace]["gpu_hours"] == pytest.approx(want, abs=1e-3)
