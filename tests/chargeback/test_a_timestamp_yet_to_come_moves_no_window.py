"""A claim whose timestamps lie in the future (hand-edited, a skewed clock, 9999-12-31) says
nothing about when it was held: the default window still ends at the snapshot's moment, for
that cluster and for all clusters together, and the holding starts at its first sighting."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from claims.chargeback_data import as_of, window
from claims.ledger.models import ChargebackHolding
from inventory.models import Cluster
from inventory.snapshot import load_path
from tests.conftest import VKS_CLAIM, VKS_SLICES, write_list

pytestmark = pytest.mark.django_db

FUTURE = "9999-12-31T23:59:59Z"


@pytest.fixture
def clusters(tmp_path, sync_snapshot):
    slices, claim = load_path(VKS_SLICES).objects, load_path(VKS_CLAIM).objects[0]
    sync_snapshot(write_list(tmp_path / "sane.json", [*slices, claim]), "sane")
    held = copy.deepcopy(claim)
    held["metadata"]["creationTimestamp"] = held["status"]["allocation"]["allocationTimestamp"] = FUTURE
    sync_snapshot(write_list(tmp_path / "held.json", [*slices, held]), "future-held")
    allocated = copy.deepcopy(claim)
    allocated["status"]["allocation"]["allocationTimestamp"] = FUTURE
    sync_snapshot(write_list(tmp_path / "allocated.json", [*slices, allocated]), "future-allocated")
    pending = copy.deepcopy(claim)
    pending["metadata"]["creationTimestamp"] = FUTURE
    del pending["status"]
    sync_snapshot(write_list(tmp_path / "pending.json", [*slices, pending]), "future-pending")
    return Cluster.objects.in_bulk(field_name="name")


def test_the_window_ends_at_the_snapshot_not_in_the_year_9999(clusters):
    for name in ("future-held", "future-pending"):
        assert as_of(clusters[name]).year < 9999, name
    _, until = window(list(clusters.values()), None, None, None)
    assert until == as_of(clusters["sane"]) and until.year < 9999
    start = ChargebackHolding.objects.get(cluster=clusters["future-held"]).start
    assert start is not None and start.year < 9999
    # Allocated "in 9999" but created at a real time: the holding starts at its creation.
    created = ChargebackHolding.objects.get(cluster=clusters["future-allocated"]).start
    assert created == datetime(2026, 7, 6, 13, 16, 19, tzinfo=UTC)


def test_the_page_of_all_clusters_ends_at_the_sane_snapshot(client_in, clusters):
    resp = client_in.get(reverse("claims:chargeback"))
    assert resp.status_code == 200
    assert "9999" not in resp.content.decode()
    assert resp.context["report"].until == as_of(clusters["sane"])
