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


SCRAPED = [c for c in CASE_DIRS if any((c / "snapshot").rglob("*.prom"))]


@pytest.mark.parametrize("case", SCRAPED, ids=lambda c: c.name)
def test_a_snapshot_clusters_dcgm_scrapes_are_read_again_from_its_files(case, sync_snapshot):
    """The scrapes are not stored: the command reads them from the files the sync read, so a
    telemetry finding (metric_not_supported_on_mig, metrics_pod_attribution_missing) is not
    missing from a stored cluster's diagnosis. (The wording may differ: the sync does not keep
    every kind a snapshot holds, such as the exporter's ClusterRole.)"""
    from inventory.models import Cluster

    sync_snapshot(case / "snapshot", name="scraped", hooks=False)
    assert Cluster.objects.get(name="scraped").snapshot_path == str(case / "snapshot")
    out, snap = StringIO(), StringIO()
    call_command("diagnose", "--cluster", "scraped", "--format", "json", stdout=out)
    call_command("diagnose", "--snapshot", str(case / "snapshot"), "--format", "json", stdout=snap)
    def found(text):
        return [(f["category"], f["objects"][:1]) for f in json.loads(text)["findings"]]  # the main object

    assert found(out.getvalue()) == found(snap.getvalue())


def test_the_scraped_cases_include_a_telemetry_finding():
    assert SCRAPED and any(expected_category(c).startswith("metric") for c in SCRAPED)
