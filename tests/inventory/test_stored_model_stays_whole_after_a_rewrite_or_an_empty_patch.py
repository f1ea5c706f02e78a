"""The stored model a fresh process loads stays whole and current in two corners a reviewer
found (both for the command and for a worker):

- a sync whose read had problems but changed no object patches nothing and keeps the chunks
  current (on PostgreSQL the binary read of no buckets raised, and the chunks went stale);
- a worker whose last store failed rewrites every chunk next time ("full"); the bucket index it
  kept must not then be trusted, or the sync after rewrote buckets without the objects the full
  rewrite had added (a claim lost to every fresh process, the marker still counting it).
"""

from __future__ import annotations

import copy

from tests.conftest import CASES, write_list

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


def _objects():
    from inventory.snapshot import load_path

    objects = load_path(CASE).objects
    for i, o in enumerate(objects):
        o["metadata"].setdefault("resourceVersion", str(1000 + i))
    return objects


def _spy(monkeypatch):
    from inventory import stored_model

    done = []
    real = stored_model.record_sync
    monkeypatch.setattr(stored_model, "record_sync", lambda *a, **k: done.append(real(*a, **k)) or done[-1])
    return done


def test_a_read_with_problems_and_no_change_keeps_the_stored_model_current(tmp_path, sync_snapshot, monkeypatch):
    from inventory import stored_model
    from inventory.models import Cluster
    from inventory.sources import SnapshotSource
    from inventory.sync import forget_models, sync_cluster

    objects = _objects()
    bad = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceSlice"))
    bad["metadata"].update(name="broken", uid="broken-uid")
    bad["spec"]["devices"] = [{"attributes": {}}]  # a device without a name: refused, a problem of the read
    path = write_list(tmp_path / "v0.json", [*objects, bad])
    sync_snapshot(path, "chunks")
    cluster = Cluster.objects.get(name="chunks")
    forget_models()  # a fresh process: no model held
    done = _spy(monkeypatch)
    run = sync_cluster(cluster, SnapshotSource(path), after_read=None)
    assert run.status == "partial" and run.errors
    before = cluster.data_changed_at
    assert done == []  # it wrote nothing, so the cluster's state and its chunks did not move
    cluster.refresh_from_db()
    assert cluster.data_changed_at == before
    assert stored_model.load(cluster.pk, cluster.data_changed_at) is not None


def test_a_full_rewrite_leaves_no_stale_bucket_index_behind(tmp_path, sync_snapshot, monkeypatch):
    from inventory import exports, stored_model
    from inventory.models import Cluster
    from inventory.sync import forget_models

    forget_models()
    objects = _objects()
    done = _spy(monkeypatch)

    def bump(objs, n, skip=()):
        out = copy.deepcopy(objs)
        for o in out:
            if o["kind"] == "ResourceClaim" and o["metadata"]["uid"] not in skip:
                o["metadata"].setdefault("labels", {})["x"] = str(n)
                o["metadata"]["resourceVersion"] = str(int(o["metadata"]["resourceVersion"]) + 100_000 * n)
        return out

    assert sync_snapshot(write_list(tmp_path / "v0.json", objects), "w").status == "ok"
    assert sync_snapshot(write_list(tmp_path / "v1.json", bump(objects, 1)), "w").status == "ok"  # the index is built
    real_insert = stored_model.insert_rows

    def fails(*a, **k):
        raise RuntimeError("the chunks' insert failed (a statement timeout, a lost connection)")

    monkeypatch.setattr(stored_model, "insert_rows", fails)
    v2 = bump(objects, 2)
    assert sync_snapshot(write_list(tmp_path / "v2.json", v2), "w").status == "ok"  # objects stored, chunks stale
    monkeypatch.setattr(stored_model, "insert_rows", real_insert)
    new = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceClaim"))
    new["metadata"].update(name="brand-new", uid="brand-new-uid", resourceVersion="777777")
    v3 = [*v2, new]
    assert sync_snapshot(write_list(tmp_path / "v3.json", v3), "w").status == "ok"
    assert sync_snapshot(write_list(tmp_path / "v4.json", bump(v3, 4, skip={"brand-new-uid"})), "w").status == "ok"
    assert done == ["full", "changed", "stale", "full", "changed"]
    cluster = Cluster.objects.get(name="w")
    stored = stored_model.load(cluster.pk, cluster.data_changed_at)
    assert stored is not None
    parsed = exports.parse_stored_model(cluster)
    for kind, of_kind in parsed.records.items():
        assert set(stored.records.get(kind, {})) == set(of_kind), kind
