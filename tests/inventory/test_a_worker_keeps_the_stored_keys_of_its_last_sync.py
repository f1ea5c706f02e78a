"""A process that synced a cluster keeps each kind's stored keys (uid -> pk, resourceVersion) for
its next sync of it (``reconcile._KNOWN``): the next sync reads no keys back, and gives exactly
what a sync that reads them from the database gives, through creates, updates, deletes and rows
written outside a sync."""

from __future__ import annotations

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from devtools.fleet import generate_fleet, mutate_claims
from inventory import reconcile
from inventory.models import TYPED_MODELS, Cluster, KubeObject, Node, Pod, ResourceClaim, ResourceSlice, SourceKind
from inventory.runs import after_read_hooks
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from tests.conftest import write_list

pytestmark = pytest.mark.django_db


def _steps(tmp_path):
    """A fleet, then: the same; 20 % of the claims changed, two pods gone and an Event new; the
    fleet again (the changes undone); one node's slices gone."""
    fleet = generate_fleet(6, seed=5)
    changed = mutate_claims(fleet, 0.2, seed=2)
    pods = [i for i, o in enumerate(changed) if o["kind"] == "Pod"][:2]
    changed = [o for i, o in enumerate(changed) if i not in pods]
    event = copy.deepcopy(next(o for o in fleet if o["kind"] == "Event"))
    event["metadata"].update(name=event["metadata"]["name"] + "-again", uid="0b3c1e8e-6a52-4c1e-9f7e-3d5b2a9c4e10",
                             resourceVersion="991")
    changed.append(event)
    node = next(o["spec"]["nodeName"] for o in fleet if o["kind"] == "ResourceSlice")
    fewer = [o for o in fleet if not (o["kind"] == "ResourceSlice" and o["spec"].get("nodeName") == node)]
    return [write_list(tmp_path / f"{i}.json", items) for i, items in enumerate([fleet, fleet, changed, fleet, fewer])]


def _stored(cluster):
    out = {}
    for model in (Node, ResourceSlice, ResourceClaim, Pod, KubeObject):
        out[model.__name__] = sorted(model.objects.filter(cluster=cluster).values_list("uid", "resource_version"))
    return out


def _kept_is_stored(cluster):
    """Every kind the process kept of ``cluster`` says exactly what the database holds."""
    kept = reconcile._KNOWN[cluster.pk][1]
    for kind, keys in kept.items():
        model = TYPED_MODELS.get(kind)
        qs = model.objects.filter(cluster=cluster) if model else KubeObject.objects.filter(cluster=cluster, kind=kind)
        assert keys == {uid: (pk, rv) for uid, pk, rv in qs.values_list("uid", "pk", "resource_version")}, kind
    return set(kept)


def _run(name, paths, *, forget):
    cluster = Cluster.objects.create(name=name, source_kind=SourceKind.SNAPSHOT)
    counts = []
    for path in paths:
        if forget:
            reconcile.forget_known()
        run = sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)
        assert run.status == "ok", run.errors
        counts.append(run.counts)
        if not forget:
            assert {"ResourceClaim", "Pod", "Event"} <= _kept_is_stored(cluster)
    return cluster, counts


def test_syncs_that_keep_the_keys_give_what_syncs_that_read_them_give(tmp_path):
    paths = _steps(tmp_path)
    kept, kept_counts = _run("kept", paths, forget=False)
    read, read_counts = _run("read", paths, forget=True)
    assert kept_counts == read_counts
    assert kept_counts[2]["ResourceClaim"]["updated"] > 0 and kept_counts[2]["Pod"]["deleted"] == 2
    assert kept_counts[4]["ResourceSlice"]["deleted"] > 0
    assert _stored(kept) == _stored(read)


def _key_reads(ctx, table):
    return [q["sql"] for q in ctx.captured_queries
            if q["sql"].lstrip().upper().startswith("SELECT") and f'"resource_version" FROM "{table}"' in q["sql"]]


def test_the_next_sync_reads_no_keys_back_unless_rows_were_written_without_a_sync(tmp_path):
    path = _steps(tmp_path)[0]
    cluster = Cluster.objects.create(name="worker", source_kind=SourceKind.SNAPSHOT)
    sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)  # reads the new rows' pks back
    with CaptureQueriesContext(connection) as ctx:
        run = sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)
    assert run.status == "ok" and run.counts["ResourceClaim"]["unchanged"] == run.counts["ResourceClaim"]["seen"] > 0
    assert _key_reads(ctx, "inventory_resourceclaim") == [] and _key_reads(ctx, "inventory_pod") == []

    # A row written by hand: the count no longer agrees, so its kind is read again and the
    # complete Node list deletes it, as a sync reading the keys does.
    Node.objects.create(cluster=cluster, uid="by-hand", name="by-hand", raw={})
    with CaptureQueriesContext(connection) as ctx:
        run = sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)
    assert run.counts["Node"]["deleted"] == 1
    assert not Node.objects.filter(cluster=cluster, uid="by-hand").exists()
    assert len(_key_reads(ctx, "inventory_node")) == 1 and _key_reads(ctx, "inventory_resourceclaim") == []
