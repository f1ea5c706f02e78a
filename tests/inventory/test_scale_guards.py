"""Scale guards (not timed): a no-change re-sync writes nothing, page query counts do not
grow with the fleet. Timings live in ``manage.py benchmark``."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from devtools.fleet import generate_fleet, mutate_claims
from inventory.models import Cluster, Node, ResourceClaim, SourceKind
from inventory.runs import after_read_hooks
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster

pytestmark = pytest.mark.django_db
BOOKKEEPING = ("inventory_syncrun", "inventory_cluster")


def _fleet_file(tmp_path, nodes, objects=None, name="fleet.json"):
    path = tmp_path / name
    items = objects if objects is not None else generate_fleet(nodes, seed=3)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path, items


def _sync(name, path):
    cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"source_kind": SourceKind.SNAPSHOT, "snapshot_path": str(path)})
    return sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)


def _writes(ctx):
    out = []
    for q in ctx.captured_queries:
        sql = q["sql"].lstrip().upper()
        if sql.startswith(("INSERT", "UPDATE", "DELETE")) and not any(t.upper() in sql for t in BOOKKEEPING):
            out.append(q["sql"][:160])
    return out


def test_no_change_resync_of_a_fleet_writes_no_rows_including_after_sync_work(tmp_path):
    path, _ = _fleet_file(tmp_path, 12)
    assert _sync("fleet", path).status == "ok"
    with CaptureQueriesContext(connection) as ctx:
        run = _sync("fleet", path)
    assert run.status == "ok"
    assert _writes(ctx) == []


def test_one_percent_claim_change_rewrites_only_those_claims(tmp_path):
    path, items = _fleet_file(tmp_path, 50)
    _sync("fleet", path)
    changed, _ = _fleet_file(tmp_path, 0, mutate_claims(items, 0.01, seed=1), name="changed.json")
    run = _sync("fleet", changed)
    assert run.counts["ResourceClaim"]["updated"] == 1
    assert run.counts["ResourceClaim"]["unchanged"] == run.counts["ResourceClaim"]["seen"] - 1
    assert run.counts["ResourceSlice"]["updated"] == 0


def _page_queries(client, cluster):
    node = Node.objects.filter(cluster=cluster, mig_count__gt=0).order_by("name").first()
    claim = ResourceClaim.objects.filter(cluster=cluster).order_by("name").first()
    urls = [
        reverse("inventory:cluster", args=[cluster.name]),
        reverse("inventory:nodes") + f"?cluster={cluster.name}",
        node.get_absolute_url(),
        reverse("inventory:devices") + f"?cluster={cluster.name}",
        reverse("claims:list") + f"?cluster={cluster.name}",
        claim.get_absolute_url(),
    ]
    counts = {}
    for url in urls:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200, url
        counts[url.replace(cluster.name, "C")] = len(ctx.captured_queries)
    return counts


def test_page_query_counts_do_not_grow_with_fleet_size(tmp_path, client_in):
    small, _ = _fleet_file(tmp_path, 4, name="small.json")
    large, _ = _fleet_file(tmp_path, 40, name="large.json")
    _sync("small", small)
    _sync("large", large)
    few = _page_queries(client_in, Cluster.objects.get(name="small"))
    many = _page_queries(client_in, Cluster.objects.get(name="large"))
    assert all(n <= 20 for n in many.values()), many
    # Node and claim pages show different objects; lists and overview must be identical.
    for url in list(few)[:2] + list(few)[3:5]:
        assert many[url] == few[url], (url, few[url], many[url])


def _counting_decode(monkeypatch):
    from inventory import jsonlist

    calls = []
    real = jsonlist.decode

    def decode(raw):
        calls.append(1)
        return real(raw)

    monkeypatch.setattr(jsonlist, "decode", decode)
    return calls


def test_no_change_resync_decodes_no_object(tmp_path, monkeypatch):
    # The re-sync's cost must not be the payload's: stored resourceVersions are matched on the
    # identity read from each item's text, and the rest of the item is never decoded.
    path, items = _fleet_file(tmp_path, 12)
    assert _sync("fleet", path).status == "ok"
    calls = _counting_decode(monkeypatch)
    run = _sync("fleet", path)
    assert run.status == "ok" and calls == []
    assert sum(c["unchanged"] for k, c in run.counts.items() if k != "skipped") == len(items)


def test_a_one_percent_change_decodes_only_the_changed_claims(tmp_path, monkeypatch):
    path, items = _fleet_file(tmp_path, 50)
    _sync("fleet", path)
    changed, _ = _fleet_file(tmp_path, 0, mutate_claims(items, 0.01, seed=1), name="changed.json")
    calls = _counting_decode(monkeypatch)
    # The reconcile alone: the analyses that follow read the stored cluster back on purpose.
    run = sync_cluster(Cluster.objects.get(name="fleet"), SnapshotSource(changed))
    assert run.counts["ResourceClaim"]["updated"] == 1
    assert len(calls) == 1
