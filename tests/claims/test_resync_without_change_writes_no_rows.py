"""A re-sync of an unchanged cluster writes no finding, transition or state row."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from store_helpers import CASE_DIRS, expected_category

from claims.models import ClaimStateSeen, ClaimTransition, Finding

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "DELETE")
TABLES = ("claims_finding", "claims_claimtransition", "claims_claimstateseen")


def _claims_writes(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITES) and any(t in q["sql"] for t in TABLES)]


@pytest.mark.parametrize("category", ["claim_stuck_deallocating", "capacity_exhausted", "driver_publishing_empty_pool"])
def test_second_sync_of_the_same_snapshot_writes_nothing(category, sync_snapshot):
    case = next(c for c in CASE_DIRS if expected_category(c) == category)
    sync_snapshot(case / "snapshot", name="same")
    before = (
        list(Finding.objects.values_list("pk", "last_seen", "summary")),
        ClaimTransition.objects.count(),
        list(ClaimStateSeen.objects.values_list("uid", "state")),
    )
    assert before[0], "the case must store findings for this test to mean anything"
    with CaptureQueriesContext(connection) as ctx:
        sync_snapshot(case / "snapshot", name="same")
    assert _claims_writes(ctx.captured_queries) == []
    after = (
        list(Finding.objects.values_list("pk", "last_seen", "summary")),
        ClaimTransition.objects.count(),
        list(ClaimStateSeen.objects.values_list("uid", "state")),
    )
    assert after == before
