"""Findings are keyed by the uid of their main object: a claim deleted and re-created under the
same name is a new finding (the old one resolves), a finding links its claim by uid, and an
open row written before (keyed by name) is carried over with its first_seen."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import CASES, write_list

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


@pytest.fixture
def objects():
    from inventory.snapshot import load_path

    return load_path(CASE).objects


def _pending(objs):
    return next(o for o in objs if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation"))


def test_a_recreated_claim_is_a_new_finding_and_the_old_one_resolves(tmp_path, objects, sync_snapshot):
    from claims.models import Finding
    from inventory.models import Cluster, ResourceClaim

    sync_snapshot(write_list(tmp_path / "v1.json", objects), "uids")
    cluster = Cluster.objects.get(name="uids")
    claim = _pending(objects)
    first = Finding.objects.get(cluster=cluster, category="capacity_exhausted", resolved_at__isnull=True)
    assert first.uid == claim["metadata"]["uid"]
    assert first.claim.uid == claim["metadata"]["uid"]
    assert first.fingerprint == f"capacity_exhausted|ResourceClaim|uid:{claim['metadata']['uid']}"

    again = copy.deepcopy(objects)
    recreated = _pending(again)
    recreated["metadata"]["uid"] = "0d6f3c1e-5b1a-4c8e-9f0e-recreated0001"
    recreated["metadata"]["resourceVersion"] = "990001"
    sync_snapshot(write_list(tmp_path / "v2.json", again), "uids")

    first.refresh_from_db()
    assert first.resolved_at is not None
    now = Finding.objects.get(cluster=cluster, category="capacity_exhausted", resolved_at__isnull=True)
    assert now.pk != first.pk
    assert now.uid == recreated["metadata"]["uid"]
    assert now.claim == ResourceClaim.objects.get(cluster=cluster, uid=recreated["metadata"]["uid"])


def test_an_open_row_keyed_by_name_is_carried_over(tmp_path, objects, sync_snapshot):
    from claims.models import Finding
    from inventory.models import Cluster

    sync_snapshot(write_list(tmp_path / "v1.json", objects), "uids")
    cluster = Cluster.objects.get(name="uids")
    row = Finding.objects.get(cluster=cluster, category="capacity_exhausted", resolved_at__isnull=True)
    claim = _pending(objects)["metadata"]
    Finding.objects.filter(pk=row.pk).update(
        uid="", fingerprint=f"capacity_exhausted|ResourceClaim|{claim['namespace']}|{claim['name']}")
    cluster.analyzed_at = None
    cluster.save(update_fields=["analyzed_at"])

    sync_snapshot(write_list(tmp_path / "v1.json", objects), "uids")
    open_rows = Finding.objects.filter(cluster=cluster, category="capacity_exhausted", resolved_at__isnull=True)
    assert [(r.pk, r.first_seen, r.uid) for r in open_rows] == [(row.pk, row.first_seen, claim["uid"])]
