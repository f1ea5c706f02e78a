"""The claim page's history never says "not seen reserved" or "not allocated" for a claim
whose reservedFor names a consumer or whose status holds an allocation: a claim first seen
already in use (or deleting with reservedFor kept) was reserved before Claimscope saw it."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from inventory.models import ResourceClaim
from tests.conftest import VKS_CLAIM

pytestmark = pytest.mark.django_db


def _docs() -> list[dict]:
    out: list[dict] = []
    for d in yaml.safe_load_all(VKS_CLAIM.read_text(encoding="utf-8")):
        if isinstance(d, dict):
            out.extend(d["items"] if d.get("kind", "").endswith("List") else [d])
    return out


def _claim(docs: list[dict]) -> dict:
    return next(d for d in docs if d.get("kind") == "ResourceClaim")


def _history(client, docs, tmp_path, sync_snapshot) -> str:
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    sync_snapshot(path, name="vks")
    meta = _claim(docs)["metadata"]
    body = client.get(f"/claims/vks/{meta['namespace']}/{meta['name']}/").content.decode()
    return re.sub(r"\s+", " ", body[body.index("<h3>History"):body.index("</dl>", body.index("<h3>History"))])


def test_a_claim_first_seen_in_use_was_reserved_before_it_was_first_seen(tmp_path, sync_snapshot, client_in):
    docs = _docs()
    assert _claim(docs)["status"]["reservedFor"]
    text = _history(client_in, docs, tmp_path, sync_snapshot)
    assert ResourceClaim.objects.get().state == "in_use"
    assert "not seen reserved" not in text
    assert "reserved before Claimscope first saw it (first seen " in text


def test_a_claim_first_seen_deleting_with_reserved_for_kept_was_reserved_before(tmp_path, sync_snapshot, client_in):
    docs = _docs()
    claim = _claim(docs)
    claim["metadata"]["deletionTimestamp"] = "2026-07-06T14:00:00Z"
    claim["metadata"].setdefault("finalizers", ["resource.kubernetes.io/delete-protection"])
    text = _history(client_in, docs, tmp_path, sync_snapshot)
    assert ResourceClaim.objects.get().state == "deleting"
    assert "not seen reserved" not in text and "reserved before Claimscope first saw it" in text
    assert claim["status"]["allocation"]["allocationTimestamp"][:10] in text


def test_an_allocation_without_allocation_timestamp_is_not_called_not_allocated(tmp_path, sync_snapshot, client_in):
    docs = _docs()
    del _claim(docs)["status"]["allocation"]["allocationTimestamp"]
    text = _history(client_in, docs, tmp_path, sync_snapshot)
    assert ResourceClaim.objects.get().allocated_at is None
    assert "not allocated" not in text
    assert "allocated before Claimscope first saw it (first seen " in text


def test_a_reservation_observed_between_syncs_shows_when_it_was_seen(tmp_path, sync_snapshot, client_in):
    docs = _docs()
    pending = copy.deepcopy(_claim(docs))
    pending.pop("status")
    pending["metadata"]["resourceVersion"] = "1"
    first = tmp_path / "pending.yaml"
    first.write_text(yaml.safe_dump_all([pending]), encoding="utf-8")
    sync_snapshot(first, name="vks")
    text = _history(client_in, docs, tmp_path, sync_snapshot)
    assert "before Claimscope first saw it" not in text and "not seen reserved" not in text
    assert "after allocation" in text
