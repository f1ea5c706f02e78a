"""A process that holds no model of a cluster (a command, a web process, a restarted worker)
reads the records the last sync stored (``inventory.stored_model``) instead of parsing every
stored object again; they equal what parsing gives after full syncs, after changes applied
from a held model and after changes patched into the stored chunks, and they are ignored when
they describe another state or were made by other parsing code."""

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


def _as_dict(model):
    return {kind: dict(by_uid) for kind, by_uid in model.records.items() if by_uid}


def _stored(cluster):
    from inventory import stored_model
    from inventory.models import Cluster

    cluster = Cluster.objects.get(pk=cluster.pk)
    return stored_model.load(cluster.pk, cluster.data_changed_at)


def _changed(objs, n):
    out = copy.deepcopy(objs)
    pods = [o for o in out if o["kind"] == "Pod"]
    out.remove(pods[0])
    claim = [o for o in out if o["kind"] == "ResourceClaim"][n % 2]
    claim["metadata"].setdefault("labels", {})["example.com/changed"] = str(n)
    claim["metadata"]["resourceVersion"] = f"88000{n}"
    return out


@pytest.mark.parametrize("held", [True, False], ids=["model held by the worker", "fresh process each sync"])
def test_stored_records_equal_the_parsed_objects_after_every_sync(tmp_path, objects, sync_snapshot, held):
    from inventory import exports
    from inventory.models import Cluster
    from inventory.sync import forget_models

    assert sync_snapshot(write_list(tmp_path / "v0.json", objects), "chunks").status == "ok"
    cluster = Cluster.objects.get(name="chunks")
    stored = _stored(cluster)
    assert stored is not None
    parsed = exports.parse_stored_model(cluster)
    assert _as_dict(stored) == _as_dict(parsed) and stored.newest == parsed.newest
    assert {type(r) for r in stored.all()} == {type(r) for r in parsed.all()}

    for n in (1, 2):
        if not held:
            forget_models()
        run = sync_snapshot(write_list(tmp_path / f"v{n}.json", _changed(objects, n)), "chunks")
        assert run.status == "ok" and run.counts["ResourceClaim"]["updated"] >= 1
        stored, parsed = _stored(cluster), exports.parse_stored_model(cluster)
        assert stored is not None
        assert _as_dict(stored) == _as_dict(parsed) and stored.newest == parsed.newest


def test_a_sync_whose_analyses_need_no_model_patches_the_stored_chunks(tmp_path, objects, sync_snapshot, monkeypatch):
    from inventory import exports, stored_model
    from inventory.models import Cluster
    from inventory.sources import SnapshotSource
    from inventory.sync import forget_models, sync_cluster

    sync_snapshot(write_list(tmp_path / "v0.json", objects), "chunks")
    cluster = Cluster.objects.get(name="chunks")
    forget_models()
    done = []
    real = stored_model.record_sync
    monkeypatch.setattr(stored_model, "record_sync", lambda *a, **k: done.append(real(*a, **k)) or done[-1])
    changed = _changed(objects, 1)
    event = next(o for o in changed if o["kind"] == "Event")
    event["message"] = "changed"
    event["metadata"]["resourceVersion"] = "990001"
    # No analysis runs, so nothing builds the model: the changed buckets are patched as stored.
    run = sync_cluster(cluster, SnapshotSource(write_list(tmp_path / "v1.json", changed)), after_read=None)
    assert run.status == "ok" and run.counts["Pod"]["deleted"] == 1
    assert done == ["patched"]
    assert _as_dict(_stored(cluster)) == _as_dict(exports.parse_stored_model(cluster))


def test_stored_records_of_another_state_or_other_parsing_code_are_not_read(tmp_path, objects, sync_snapshot, monkeypatch):
    from django.utils import timezone

    from inventory import model_codec, stored_model
    from inventory.models import Cluster, Pod

    sync_snapshot(write_list(tmp_path / "v0.json", objects), "chunks")
    cluster = Cluster.objects.get(name="chunks")
    assert _stored(cluster) is not None
    monkeypatch.setattr(model_codec, "fingerprint", lambda: "other parsing code")
    assert _stored(cluster) is None
    monkeypatch.setattr(model_codec, "fingerprint", lambda: "")  # sources unreadable: nothing is trusted
    assert _stored(cluster) is None
    monkeypatch.undo()
    # Another writer changed the objects and said so: the chunks describe an older state.
    Pod.objects.filter(cluster=cluster).order_by("pk").first().delete()
    Cluster.objects.filter(pk=cluster.pk).update(data_changed_at=timezone.now())
    assert _stored(cluster) is None
    assert stored_model.load(cluster.pk, None) is None


def test_a_chunk_that_does_not_decode_falls_back_to_parsing(tmp_path, objects, sync_snapshot):
    from inventory import exports
    from inventory.models import Cluster, ModelChunk

    sync_snapshot(write_list(tmp_path / "v0.json", objects), "chunks")
    cluster = Cluster.objects.get(name="chunks")
    ModelChunk.objects.filter(cluster=cluster, kind="Pod").update(data=b"\x93not records")
    assert _stored(cluster) is None
    assert _as_dict(exports.load_model(cluster)) == _as_dict(exports.parse_stored_model(cluster))


def test_an_object_written_without_a_sync_makes_the_stored_records_stale(tmp_path, objects, sync_snapshot):
    from inventory import exports
    from inventory.models import Cluster, KubeObject

    sync_snapshot(write_list(tmp_path / "v0.json", objects), "chunks")
    cluster = Cluster.objects.get(name="chunks")
    assert _stored(cluster) is not None
    KubeObject.objects.create(cluster=cluster, kind="ConfigMap", api_version="v1", namespace="default",
                              name="written-by-hand", uid="cm-by-hand", resource_version="1",
                              raw={"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "written-by-hand", "namespace": "default", "uid": "cm-by-hand"}})
    assert _stored(cluster) is None
    assert "cm-by-hand" in exports.load_model(cluster).records["ConfigMap"]
