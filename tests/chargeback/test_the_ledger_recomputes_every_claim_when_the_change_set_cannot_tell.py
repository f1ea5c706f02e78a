"""The ledger hook looks at every claim (a full recompute) when the analyses are forced, the
read had errors (its change set may be incomplete), a changed slice is not in the model or
the cluster's ledger was never recorded; otherwise at the claims the change set names."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from chargeback_helpers import CASES

import claims.chargeback_data as cd
from claims.ledger.models import LedgerSighting
from inventory.changes import ChangeSet
from inventory.models import ResourceClaim, ResourceSlice

CASE = "healthy-cluster-h100"


def _read(changes, forced=False):
    return SimpleNamespace(changes=changes, analyses_forced=forced)


@pytest.mark.django_db
def test_only_a_change_set_that_tells_everything_narrows_the_ledger(sync_snapshot):
    cluster = sync_snapshot(CASES / CASE / "snapshot", "h100").cluster
    claim = ResourceClaim.objects.filter(cluster=cluster, state="in_use").first()
    one = ChangeSet()
    one.add("updated", "ResourceClaim", [claim.uid])
    assert cd.ledger_claims_for(cluster, _read(one)) == {claim.uid}

    assert cd.ledger_claims_for(cluster, _read(one, forced=True)) is None
    assert cd.ledger_claims_for(cluster, _read(None)) is None
    partial = ChangeSet(incomplete=True)
    partial.add("updated", "ResourceClaim", [claim.uid])
    assert cd.ledger_claims_for(cluster, _read(partial)) is None

    # A slice changed that the model does not hold (or no model at all): every claim.
    sliced = ChangeSet()
    sliced.add("updated", "ResourceSlice", [ResourceSlice.objects.filter(cluster=cluster).values_list("uid", flat=True).first()])
    assert cd.ledger_claims_for(cluster, _read(sliced), model=None) is None

    LedgerSighting.objects.filter(cluster=cluster).delete()  # never recorded
    assert cd.ledger_claims_for(cluster, _read(one)) is None
