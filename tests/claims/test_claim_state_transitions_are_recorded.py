"""Claim state changes between syncs become ClaimTransition rows (old, new, reason)."""

from __future__ import annotations

import copy

import pytest
import yaml

from claims.models import ClaimStateSeen, ClaimTransition
from inventory.models import ResourceClaim
from tests.conftest import VKS_CLAIM

pytestmark = pytest.mark.django_db


def _claim_docs() -> list[dict]:
    """The objects of the fixture (a ``kind: List``), unrolled."""
    out: list[dict] = []
    for d in yaml.safe_load_all(VKS_CLAIM.read_text(encoding="utf-8")):
        if isinstance(d, dict):
            out.extend(d["items"] if d.get("kind", "").endswith("List") else [d])
    return out


def _write(path, docs):
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    return path


def test_pending_then_reserved_claim_records_both_states(tmp_path, sync_snapshot):
    allocated = _claim_docs()
    claim = next(d for d in allocated if d.get("kind") == "ResourceClaim")
    pending = copy.deepcopy(claim)
    pending.pop("status", None)
    pending["metadata"]["resourceVersion"] = "1"  # an older version of the same object
    sync_snapshot(_write(tmp_path / "pending.yaml", [pending]), name="vks")
    sync_snapshot(_write(tmp_path / "allocated.yaml", allocated), name="vks")

    uid = ResourceClaim.objects.get(name=claim["metadata"]["name"]).uid
    rows = list(ClaimTransition.objects.filter(field="state", claim_uid=uid))
    assert [(t.old, t.new) for t in rows] == [("", "pending"), ("pending", "in_use")]
    assert rows[0].reason == "first observed"
    assert "reserved" in rows[1].reason
    assert ClaimStateSeen.objects.get(uid=uid).state == "in_use"


def test_claim_page_shows_the_history(tmp_path, sync_snapshot, client_in):
    allocated = _claim_docs()
    claim = next(d for d in allocated if d.get("kind") == "ResourceClaim")
    pending = copy.deepcopy(claim)
    pending.pop("status", None)
    pending["metadata"]["resourceVersion"] = "1"
    sync_snapshot(_write(tmp_path / "pending.yaml", [pending]), name="vks")
    sync_snapshot(_write(tmp_path / "allocated.yaml", allocated), name="vks")
    meta = claim["metadata"]
    resp = client_in.get(f"/claims/vks/{meta['namespace']}/{meta['name']}/")
    body = resp.content.decode()
    assert resp.status_code == 200
    assert "Time to allocation" in body and "first observed" in body and "allocated and reserved for a consumer" in body
