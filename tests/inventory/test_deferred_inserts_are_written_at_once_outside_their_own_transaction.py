"""bulk.DeferredInserts leaves a COPY open only inside the transaction it was entered in: used
outside any transaction, or from an atomic block opened inside its own, an insert is written at
once, so ending that transaction or block (or opening another) never meets a COPY still open.
Run on both databases; on SQLite inserts are always immediate."""

from __future__ import annotations

import pytest
from django.db import transaction

from inventory.bulk import DeferredInserts
from inventory.models import Cluster, Node, SourceKind

pytestmark = pytest.mark.django_db(transaction=True)


def _row(cluster, name):
    return {"cluster_id": cluster.pk, "uid": f"uid-{name}", "name": name, "raw": {"metadata": {"name": name}}}


@pytest.fixture
def cluster():
    return Cluster.objects.create(name="deferred-outside", source_kind=SourceKind.SNAPSHOT)


def test_outside_a_transaction_an_insert_is_stored_before_it_returns(cluster):
    outcomes = []
    with DeferredInserts() as later:
        later.insert(Node, [_row(cluster, "a")], outcomes.append)
        assert outcomes == [None]  # stored (committed) already
        with transaction.atomic():  # a transaction of the caller's own, after the insert
            Node.objects.create(cluster=cluster, uid="uid-b", name="b", raw={})
        later.insert(Node, [_row(cluster, "c")], outcomes.append)
    assert outcomes == [None, None]
    assert sorted(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["a", "b", "c"]


def test_an_insert_from_an_inner_atomic_block_is_stored_before_the_block_ends(cluster):
    outcomes = []
    with transaction.atomic(), DeferredInserts() as later:
        later.insert(Node, [_row(cluster, "outer")], outcomes.append)  # may stay open
        with transaction.atomic():
            later.insert(Node, [_row(cluster, "inner")], outcomes.append)
        with transaction.atomic():
            later.insert(Node, [_row(cluster, "rolled-back")], outcomes.append)
            transaction.set_rollback(True)
        assert Node.objects.filter(cluster=cluster).count() == 2
        later.insert(Node, [_row(cluster, "last")], outcomes.append)
    assert outcomes == [None, None, None, None]
    assert sorted(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["inner", "last", "outer"]
