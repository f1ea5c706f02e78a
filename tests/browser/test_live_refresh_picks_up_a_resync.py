"""In Chromium, the stuck queue's own timed refresh (every 10 s, no reload) picks up a re-sync:
the demo read again without one stuck workload drops its finding from the open table and from
the navigation's Stuck badge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect


def _resync_without(cluster_name: str, claim_name_part: str, folder: Path) -> str:
    """Sync the cluster again from a copy of its snapshot without the claims (and their pods)
    whose name contains ``claim_name_part``; returns the removed claim's name."""
    from inventory.models import Cluster
    from inventory.runs import after_read_hooks
    from inventory.sources import SnapshotSource
    from inventory.sync import sync_cluster

    cluster = Cluster.objects.get(name=cluster_name)
    shutil.copytree(cluster.snapshot_path, folder)
    doc = json.loads((folder / "cluster.json").read_text())
    gone = [o for o in doc["items"] if o["kind"] == "ResourceClaim" and claim_name_part in o["metadata"]["name"]]
    assert len(gone) == 1, [o["metadata"]["name"] for o in gone]
    claim = gone[0]["metadata"]["name"]
    pods = {p["metadata"]["name"] for p in doc["items"] if p["kind"] == "Pod"
            and any(c.get("name") == claim for c in (p.get("status") or {}).get("resourceClaimStatuses") or [])}  # fmt: skip
    pods |= {r["name"] for r in (gone[0].get("status") or {}).get("reservedFor") or []}
    doc["items"] = [o for o in doc["items"] if o not in gone and not (o["kind"] == "Pod" and o["metadata"]["name"] in pods)]
    (folder / "cluster.json").write_text(json.dumps(doc))
    run = sync_cluster(cluster, SnapshotSource(folder), after_read=after_read_hooks)
    assert run.error == "", run.error
    return claim


@pytest.mark.browser
def test_the_timed_refresh_shows_a_resync_without_a_reload(page, live_server, tmp_path):
    from claims.models import Finding

    page.goto(live_server.url + "/claims/stuck/?category=device_class_missing")
    rows = page.locator("#table tbody tr")
    expect(rows).to_have_count(1)
    claim = Finding.objects.open().get(cluster__name="demo", category="device_class_missing").name
    expect(rows.first).to_contain_text(claim)
    badge = page.locator("#nav-stuck .badge")
    before = int(badge.inner_text())
    page.evaluate("() => { window.__kept = 'no reload'; }")

    assert _resync_without("demo", "batch-infer", tmp_path / "resync") == claim
    assert not Finding.objects.open().filter(cluster__name="demo", category="device_class_missing").exists()

    # No reload, no click: the table's own 10 s refresh brings the change.
    expect(rows.first).to_contain_text("Nothing is stuck", timeout=20000)
    expect(badge).to_have_text(str(before - 1))
    assert page.evaluate("() => window.__kept") == "no reload"
    assert page.js_errors == []
