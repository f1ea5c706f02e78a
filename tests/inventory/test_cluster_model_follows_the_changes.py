"""The cluster model a worker keeps (every record of a cluster, by kind and uid) follows each
sync's changes: after creates, updates and deletes it equals the model read back from the
stored objects, the next sync in the same process reads nothing back (neither the stored objects nor the
stored model), and a sync that failed
leaves no trace in it."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import CASES, write_list

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


@pytest.fixture
def objects():
    from inventory.snapshot import load_path

    return load_path(CASE).objects


@pytest.fixture(autouse=True)
def _fresh_cache():
    from inventory.sync import forget_models

    forget_models()
    yield
    forget_models()


def _cached(cluster):
    from inventory import sync

    _basis, model = sync._models[cluster.pk]
    return model


def _as_dict(model):
    return {kind: dict(by_uid) for kind, by_uid in model.records.items() if by_uid}


def _changed(objs):
    out = copy.deepcopy(objs)
    pods = [o for o in out if o["kind"] == "Pod"]
    out.remove(pods[0])  # deleted
    claim = next(o for o in out if o["kind"] == "ResourceClaim")
    claim["metadata"].setdefault("labels", {})["example.com/changed"] = "yes"  # updated
    claim["metadata"]["resourceVersion"] = "880001"
    new_pod = copy.deepcopy(pods[1])  # created
    new_pod["metadata"].update(name=new_pod["metadata"]["name"] + "-b", uid="5f0c9a77-0000-4000-8000-00000000000b",
                               resourceVersion="880002")
    out.append(new_pod)
    return out


def test_the_kept_model_equals_the_stored_cluster_after_each_change(tmp_path, objects, sync_snapshot, monkeypatch):
    from inventory import exports
    from inventory.models import Cluster

    assert sync_snapshot(write_list(tmp_path / "v1.json", objects), "model").status == "ok"
    cluster = Cluster.objects.get(name="model")
    assert _as_dict(_cached(cluster)) == _as_dict(exports.parse_stored_model(cluster))
    assert _cached(cluster).newest_timestamp() is not None

    from inventory import stored_model

    reads = []
    real = exports.parse_stored_model
    monkeypatch.setattr(exports, "parse_stored_model", lambda c: reads.append(c) or real(c))
    real_load = stored_model.load
    monkeypatch.setattr(stored_model, "load", lambda *a: reads.append(a) or real_load(*a))
    run = sync_snapshot(write_list(tmp_path / "v2.json", _changed(objects)), "model")
    assert run.status == "ok"
    assert {k: v for k, v in run.counts["Pod"].items() if k in ("created", "deleted")} == {"created": 1, "deleted": 1}
    assert reads == []  # the worker's model took the changes; nothing was read back
    assert _as_dict(_cached(cluster)) == _as_dict(real(cluster))


def test_a_model_another_process_made_stale_is_read_back(tmp_path, objects, sync_snapshot):
    from django.utils import timezone

    from inventory import exports
    from inventory.models import Cluster, Pod

    sync_snapshot(write_list(tmp_path / "v1.json", objects), "model")
    cluster = Cluster.objects.get(name="model")
    # Another worker synced the cluster meanwhile (here: removed a pod and said so).
    Pod.objects.filter(cluster=cluster).order_by("pk").first().delete()
    Cluster.objects.filter(pk=cluster.pk).update(data_changed_at=timezone.now(), analyzed_at=None)
    sync_snapshot(write_list(tmp_path / "v1.json", objects), "model")
    assert _as_dict(_cached(cluster)) == _as_dict(exports.parse_stored_model(cluster))


@pytest.mark.parametrize("where", ["reconcile", "after_analyses"])
def test_a_failed_sync_leaves_no_trace_in_the_kept_model(tmp_path, objects, sync_snapshot, monkeypatch, where):
    from inventory import exports, sync
    from inventory.models import Cluster, SyncStatus
    from inventory.reconcile import Reconcile

    sync_snapshot(write_list(tmp_path / "v1.json", objects), "model")
    cluster = Cluster.objects.get(name="model")
    before = _as_dict(_cached(cluster))

    if where == "reconcile":
        def crash(self, read):
            raise RuntimeError("disk full")

        monkeypatch.setattr(Reconcile, "finish", crash)
    else:  # the model took the changes, then the transaction failed before its commit
        real_finish = sync._finish

        def crash(cluster, run, t0, changed):
            if run.status != SyncStatus.FAILED:
                raise RuntimeError("connection lost")
            return real_finish(cluster, run, t0, changed)

        monkeypatch.setattr(sync, "_finish", crash)
    assert sync_snapshot(write_list(tmp_path / "v2.json", _changed(objects)), "model").status == "failed"
    monkeypatch.undo()
    assert before == _as_dict(exports.parse_stored_model(cluster))  # rolled back
    if cluster.pk in sync._models:  # kept only when it still matches the stored cluster
        assert _as_dict(_cached(cluster)) == before
