"""A ledger written by the rule before ``LedgerSighting`` (every open row's ``last_seen`` moved
on each sync) gets its cluster's sighting from the migration, reads the same afterwards
(``as_of``, the report), and the next sync closes a released holding at that sighting."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from chargeback_helpers import CASES, load_case
from django.apps import apps

import claims.chargeback_data as cd
from claims.ledger.models import ChargebackHolding, LedgerSighting
from inventory.snapshot import load_path
from tests.conftest import write_list

CASE = "healthy-cluster-h100"
migration = importlib.import_module("claims.ledger.migrations.0002_ledgersighting")


def _totals(cluster, since, until):
    report, _ = cd.build_report([cluster], since, until)
    return sorted((r.namespace, r.product, round(r.gpu_hours, 6), len(r.claims), r.devices) for r in report.rows)


@pytest.mark.django_db
def test_the_migration_gives_the_cluster_its_latest_sighting_and_the_readers_do_not_move(sync_snapshot, tmp_path):
    claims, _, first_time = load_case(CASE)
    run = sync_snapshot(CASES / CASE / "snapshot", "h100")
    cluster = run.cluster
    rows = ChargebackHolding.objects.filter(cluster=cluster)
    assert rows.filter(end__isnull=True).count() == sum(len(c.results) for c in claims if c.allocated)

    # As the old rule left it two syncs later: one holding released at the first sync's time,
    # the others seen (last_seen) an hour later; no sighting row.
    later = first_time + timedelta(hours=1)
    released = rows.order_by("start").first()
    rows.filter(pk=released.pk).update(end=first_time, last_seen=first_time)
    rows.filter(end__isnull=True).update(last_seen=later)
    LedgerSighting.objects.filter(cluster=cluster).delete()
    since, until = first_time - timedelta(days=2), later
    before = (cd.as_of(cluster), _totals(cluster, since, until))

    migration.sightings_from_rows(apps, None)
    assert LedgerSighting.objects.get(cluster=cluster).at == later
    assert (cd.as_of(cluster), _totals(cluster, since, until)) == before == (later, before[1])

    # The next sync, from its change set: another claim deleted ends at the sighting.
    gone = next(c for c in claims if c.allocated and c.uid != released.claim_uid)
    objects = [o for o in load_path(CASES / CASE / "snapshot").objects
               if not (o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == gone.name)]  # fmt: skip
    sync_snapshot(write_list(tmp_path / "later.json", objects), "h100")
    closed = rows.filter(claim_uid=gone.uid)
    assert closed.count() == len(gone.results) and all(r.end == later == r.last_seen for r in closed)
    assert rows.filter(pk=released.pk, end=first_time).exists()
