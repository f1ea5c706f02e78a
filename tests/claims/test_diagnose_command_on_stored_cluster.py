"""``manage.py diagnose --cluster`` diagnoses the stored objects of a synced cluster."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from store_helpers import CASE_DIRS, expected_category

from claims.models import Finding

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("category", ["capacity_exhausted", "reserved_for_missing_pod", "none"])
def test_stored_cluster_gets_the_same_diagnosis_as_its_snapshot(category, sync_snapshot):
    case = next(c for c in CASE_DIRS if expected_category(c) == category)
    sync_snapshot(case / "snapshot", name="stored", hooks=False)
    out = StringIO()
    call_command("diagnose", "--cluster", "stored", "--format", "json", stdout=out)
    got = [f["category"] for f in json.loads(out.getvalue())["findings"]]
    snap = StringIO()
    call_command("diagnose", "--snapshot", str(case / "snapshot"), "--format", "json", stdout=snap)
    assert got == [f["category"] for f in json.loads(snap.getvalue())["findings"]]
    assert (category in got) if category != "none" else got == []
    assert not Finding.objects.exists()  # the command only reads


def test_unknown_cluster_is_a_command_error(db):
    with pytest.raises(CommandError, match="no cluster named"):
        call_command("diagnose", "--cluster", "nope")
