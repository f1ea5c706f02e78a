"""The sync consumes a streamed read in batches: rows land while the read goes on, the result
does not depend on batch size or on the order kinds arrive in, and a bad read deletes nothing."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from django.db import connection

from devtools.fleet import generate_fleet
from inventory import reconcile
from inventory.kinds import KIND_NAMES
from inventory.models import (
    AllocationResult,
    Cluster,
    Device,
    DeviceClass,
    KubeObject,
    Node,
    Pod,
    Reservation,
    ResourceClaim,
    ResourceSlice,
)
from inventory.parse import object_uid
from inventory.readitem import ReadItem
from inventory.snapshot import load_path
from inventory.sources import ReadResult, SnapshotSource, SourceError
from inventory.sync import apply_read, sync_cluster
from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES

pytestmark = pytest.mark.django_db

SMALL = 4  # objects per batch in these tests: a small fleet spans many batches


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", SMALL)


def _fleet(nodes=12):
    return generate_fleet(nodes, seed=3)


def _kinds(objects):
    return {o["kind"] for o in objects if o["kind"] in KIND_NAMES}


class _StreamSource:
    """A source whose read is a generator (as LiveSource and SnapshotSource give)."""

    def __init__(self, items, complete_kinds, errors=()):
        self.items, self.complete_kinds, self.errors = items, set(complete_kinds), list(errors)
        self.description = "stream:test"

    def read(self):
        return ReadResult(stream=iter(self.items), complete_kinds=self.complete_kinds, errors=self.errors)


def _stream_read(objects, complete=None):
    objects = copy.deepcopy(objects)
    return ReadResult(stream=(ReadItem.of(o) for o in objects), complete_kinds=set(complete if complete is not None else _kinds(objects)))


def _devices(cluster):
    return {
        (d, p, n): (sorted(classes), node)
        for d, p, n, classes, node in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "device_classes", "node_name")
    }


def _allocations(cluster):
    return sorted(
        (c, r, drv, pool, name, dev_key)
        for c, r, drv, pool, name, dev_key in AllocationResult.objects.filter(cluster=cluster).values_list(
            "claim__name", "request", "driver", "pool", "device_name", "device__name"
        )
    )


def _node_summaries(cluster):
    return {
        n.name: (n.gpu_count, n.mig_count, n.allocated_count, n.free_count, n.device_count)
        for n in Node.objects.filter(cluster=cluster)
    }


def _snapshot_of(cluster):
    return {
        "devices": _devices(cluster),
        "allocations": _allocations(cluster),
        "nodes": _node_summaries(cluster),
        "slices": set(ResourceSlice.objects.filter(cluster=cluster).values_list("uid", "resource_version")),
        "claims": set(ResourceClaim.objects.filter(cluster=cluster).values_list("uid", "state")),
        "pods": set(Pod.objects.filter(cluster=cluster).values_list("uid", "phase")),
        "others": Counter(KubeObject.objects.filter(cluster=cluster).values_list("kind", flat=True)),
    }


# -- (a) rows are written while the read goes on ------------------------------------------------


def test_first_batches_are_in_the_database_while_the_stream_is_still_read(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="stream")
    slices_total = sum(1 for o in objects if o["kind"] == "ResourceSlice")
    observed = []

    def stream():
        yielded = Counter()
        for o in copy.deepcopy(objects):
            # What is stored at this point of the read, per kind, against what was yielded.
            stored = ResourceSlice.objects.filter(cluster=cluster).count()
            observed.append((yielded["ResourceSlice"], stored, Device.objects.filter(cluster=cluster).count()))
            yielded[o["kind"]] += 1
            yield ReadItem.of(o)

    counts, errors = apply_read(cluster, ReadResult(stream=stream(), complete_kinds=_kinds(objects)))
    assert not errors
    assert counts["ResourceSlice"]["created"] == slices_total
    # Before the last object, nearly every slice was stored already; at no point did more than
    # one batch of slices wait in memory.
    last_yielded, last_stored, last_devices = observed[-1]
    assert last_yielded == slices_total
    assert last_stored >= slices_total - SMALL and last_stored > 0 and last_devices > 0
    assert all(stored >= yielded - SMALL for yielded, stored, _ in observed)


def test_the_result_does_not_depend_on_the_batch_size(monkeypatch):
    objects = _fleet()
    one = Cluster.objects.create(name="one-batch")
    apply_read(one, ReadResult(objects=copy.deepcopy(objects), complete_kinds=_kinds(objects)))
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 3)
    many = Cluster.objects.create(name="many-batches")
    counts, errors = apply_read(many, _stream_read(objects))
    assert not errors
    assert _snapshot_of(many) == _snapshot_of(one)
    assert all(d[0] for d in _devices(many).values() if d)  # classes were matched at all
    assert counts["Device"]["created"] == Device.objects.filter(cluster=one).count()


def test_a_stream_failing_after_flushed_batches_rolls_back_everything(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="rollback")
    before = sync_cluster(cluster, _StreamSource([ReadItem.of(o) for o in copy.deepcopy(objects[: len(objects) // 3])], _kinds(objects)))
    assert before.status == "ok", before.errors
    stored = _snapshot_of(cluster)

    def failing():
        for i, o in enumerate(copy.deepcopy(objects)):
            if i == len(objects) - 5:
                raise SourceError("connection reset while reading the list")
            yield ReadItem.of(o)

    class Failing(_StreamSource):
        def read(self):
            return ReadResult(stream=failing(), complete_kinds=_kinds(objects))

    run = sync_cluster(cluster, Failing([], ()))
    assert run.status == "failed"
    assert "connection reset" in run.error
    assert _snapshot_of(cluster) == stored


# -- (b) raw text stored unchanged --------------------------------------------------------------


def _real_objects():
    objs = []
    seen = set()
    for f in (H100_SLICES, VKS_SLICES, VKS_CLAIM, CASES / "healthy-cluster-h100/snapshot/cluster.yaml"):
        # The case holds the same slices as H100_SLICES: one copy each (a repeated uid is a problem).
        for o in load_path(f).objects:
            if (o["kind"], o["metadata"].get("uid") or o["metadata"]["name"]) not in seen:
                seen.add((o["kind"], o["metadata"].get("uid") or o["metadata"]["name"]))
                objs.append(o)
    # Hostile label values must survive the text path byte for byte: one object of each kind.
    for kind in ("ResourceSlice", "ResourceClaim", "Pod"):
        o = next(o for o in objs if o["kind"] == kind)
        o["metadata"].setdefault("labels", {})["claimscope.test/hostile"] = '"</script>\\u0000 ☃ \\ \U0001f680'
    return objs


def _write_list(path, objects, **dump):
    path.write_text(json.dumps({"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}}, **dump), encoding="utf-8")
    return path


def _stored_raw(cluster):
    out = {}
    for kind, model in (("ResourceSlice", ResourceSlice), ("ResourceClaim", ResourceClaim), ("Pod", Pod), ("Node", Node), ("DeviceClass", DeviceClass)):
        for uid, raw in model.objects.filter(cluster=cluster).values_list("uid", "raw"):
            out[(kind, uid)] = raw
    for kind, uid, raw in KubeObject.objects.filter(cluster=cluster).values_list("kind", "uid", "raw"):
        out[(kind, uid)] = raw
    return out


def test_compact_json_list_items_are_stored_as_their_own_objects(tmp_path, sync_snapshot):
    objects = _real_objects()
    path = _write_list(tmp_path / "compact.json", objects, separators=(",", ":"), ensure_ascii=False)
    run = sync_snapshot(path, name="compact", hooks=False)
    assert run.status == "ok", run.errors
    cluster = Cluster.objects.get(name="compact")
    stored = _stored_raw(cluster)
    kinds = Counter(k for k, _ in stored)
    assert kinds["ResourceSlice"] and kinds["ResourceClaim"] and kinds["Pod"]
    by_uid = {(o["kind"], object_uid(o)): o for o in objects if o["kind"] in KIND_NAMES}
    for key, raw in stored.items():
        if key in by_uid:
            assert raw == by_uid[key], key
    assert {k for k in by_uid if k[0] in ("ResourceSlice", "ResourceClaim", "Pod")} <= set(stored)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL jsonb keeps no text, only the value")
def test_on_sqlite_the_raw_column_holds_the_items_exact_text(tmp_path, sync_snapshot):
    objects = _real_objects()
    path = _write_list(tmp_path / "compact.json", objects, separators=(",", ":"), ensure_ascii=False)
    sync_snapshot(path, name="exact", hooks=False)
    texts = {(o["kind"], object_uid(o)): json.dumps(o, separators=(",", ":"), ensure_ascii=False) for o in objects}
    with connection.cursor() as cur:
        cur.execute("SELECT uid, raw FROM inventory_resourceslice")
        rows = cur.fetchall()
    assert rows
    for uid, text in rows:
        assert text == texts[("ResourceSlice", uid)]


def test_an_indented_json_list_stores_the_same_raw_objects(tmp_path, sync_snapshot):
    objects = _real_objects()
    sync_snapshot(_write_list(tmp_path / "compact.json", objects, separators=(",", ":")), name="compact", hooks=False)
    sync_snapshot(_write_list(tmp_path / "indented.json", objects, indent=2), name="indented", hooks=False)
    compact, indented = _stored_raw(Cluster.objects.get(name="compact")), _stored_raw(Cluster.objects.get(name="indented"))
    assert compact and compact == indented


def test_a_yaml_snapshot_and_its_json_list_store_the_same_raw_objects(tmp_path, sync_snapshot):
    case = CASES / "healthy-cluster-h100/snapshot/cluster.yaml"
    sync_snapshot(case, name="yaml", hooks=False)
    sync_snapshot(_write_list(tmp_path / "c.json", load_path(case).objects, separators=(",", ":")), name="json", hooks=False)
    assert _stored_raw(Cluster.objects.get(name="yaml")) == _stored_raw(Cluster.objects.get(name="json"))


# -- (c) DeviceClasses in any order and changing between syncs ------------------------------------


def _classes_last(objects):
    return [o for o in objects if o["kind"] != "DeviceClass"] + [o for o in objects if o["kind"] == "DeviceClass"]


def _classes_middle(objects):
    rest = [o for o in objects if o["kind"] != "DeviceClass"]
    half = len(rest) // 2
    return rest[:half] + [o for o in objects if o["kind"] == "DeviceClass"] + rest[half:]


def _reference(objects, name="reference"):
    """Devices of a one-shot sync that reads the DeviceClasses first."""
    cluster = Cluster.objects.create(name=name)
    ordered = [o for o in objects if o["kind"] == "DeviceClass"] + [o for o in objects if o["kind"] != "DeviceClass"]
    apply_read(cluster, ReadResult(objects=copy.deepcopy(ordered), complete_kinds=_kinds(objects)))
    return _devices(cluster)


@pytest.mark.parametrize("order", [_classes_last, _classes_middle], ids=["classes-last", "classes-middle"])
def test_device_classes_read_after_the_slices_match_devices_as_if_read_first(small_batches, order):
    objects = _fleet()
    want = _reference(objects)
    assert any(c for c, _ in want.values())
    cluster = Cluster.objects.create(name="late")
    _, errors = apply_read(cluster, _stream_read(order(objects)))
    assert not errors
    assert _devices(cluster) == want


def _device_class(name, expr, uid, rv="1"):
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": name, "uid": uid, "resourceVersion": rv, "generation": 1, "creationTimestamp": "2026-10-03T16:00:00Z"},
        "spec": {"selectors": [{"cel": {"expression": expr}}]},
    }  # fmt: skip


def _changed_classes(objects):
    """The fleet with: the first class's selector widened (new resourceVersion), the second
    class gone, a new class added."""
    out = copy.deepcopy(objects)
    classes = [o for o in out if o["kind"] == "DeviceClass"]
    first, second = classes[0], classes[1]
    first["metadata"]["resourceVersion"] = str(int(first["metadata"]["resourceVersion"]) + 1)
    first["spec"]["selectors"] = [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]
    out.remove(second)
    out.append(_device_class("any-device", "true", "7d0a3c9e-0000-4000-8000-000000000001"))
    return out


@pytest.mark.parametrize("order", [lambda o: o, _classes_last], ids=["classes-first", "classes-last"])
def test_classes_changed_between_syncs_rematch_every_device(small_batches, order):
    objects = _fleet()
    cluster = Cluster.objects.create(name="changing")
    apply_read(cluster, _stream_read(objects))
    changed = _changed_classes(objects)
    counts, errors = apply_read(cluster, _stream_read(order(changed)))
    assert not errors
    assert counts["DeviceClass"] == {**counts["DeviceClass"], "updated": 1, "created": 1, "deleted": 1}
    assert counts["ResourceSlice"]["updated"] == 0 and counts["ResourceSlice"]["created"] == 0  # slices unchanged
    want = _reference(changed)
    assert _devices(cluster) == want
    assert any("any-device" in c for c, _ in want.values())


def test_a_class_deleted_in_a_complete_read_leaves_no_device_naming_it(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="deleted-class")
    apply_read(cluster, _stream_read(objects))
    gone = next(o for o in objects if o["kind"] == "DeviceClass" and o["metadata"]["name"] == "mig.nvidia.com")
    assert any("mig.nvidia.com" in c for c, _ in _devices(cluster).values())
    rest = [o for o in objects if o is not gone]
    counts, _ = apply_read(cluster, _stream_read(rest))
    assert counts["DeviceClass"]["deleted"] == 1
    assert not any("mig.nvidia.com" in c for c, _ in _devices(cluster).values())
    assert _devices(cluster) == _reference(rest)


def test_all_classes_deleted_in_a_complete_read_leave_devices_without_classes(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="no-classes")
    apply_read(cluster, _stream_read(objects))
    rest = [o for o in objects if o["kind"] != "DeviceClass"]
    apply_read(cluster, _stream_read(rest, complete=_kinds(objects)))
    assert not DeviceClass.objects.filter(cluster=cluster).exists()
    assert all(c == [] for c, _ in _devices(cluster).values())


def test_a_class_deleted_in_a_partial_read_is_kept_and_still_matched(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="partial-class")
    apply_read(cluster, _stream_read(objects))
    before = _devices(cluster)
    rest = [o for o in objects if not (o["kind"] == "DeviceClass" and o["metadata"]["name"] == "mig.nvidia.com")]
    read = _stream_read(rest)
    read.errors.append("list Pod (v1): HTTP 500 Injected")
    apply_read(cluster, read)
    assert DeviceClass.objects.filter(cluster=cluster, name="mig.nvidia.com").exists()
    assert _devices(cluster) == before


# -- (d) a claim read before the slice of its device ----------------------------------------------


@pytest.mark.parametrize("batch", [1, SMALL, 500])
def test_a_claim_read_before_its_slice_still_points_at_the_device(monkeypatch, batch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", batch)
    claims = load_path(VKS_CLAIM).objects
    slices = load_path(VKS_SLICES).objects
    ref = Cluster.objects.create(name="slices-first")
    apply_read(ref, _stream_read(slices + claims))
    late = Cluster.objects.create(name="claim-first")
    _, errors = apply_read(late, _stream_read(claims + slices))
    assert not errors
    results = AllocationResult.objects.filter(cluster=late)
    assert results.exists()
    assert not results.filter(device__isnull=True).exists()
    assert _allocations(late) == _allocations(ref)
    assert _node_summaries(late) == _node_summaries(ref)
    assert sum(a for _, _, a, _, _ in _node_summaries(late).values()) == results.count()


def test_fleet_claims_before_all_slices_resolve_like_slices_first(small_batches):
    objects = _fleet()
    ref = Cluster.objects.create(name="ref")
    apply_read(ref, _stream_read(objects))
    claims_first = [o for o in objects if o["kind"] == "ResourceClaim"] + [o for o in objects if o["kind"] != "ResourceClaim"]
    late = Cluster.objects.create(name="late")
    apply_read(late, _stream_read(claims_first))
    assert _allocations(late) == _allocations(ref)
    assert not AllocationResult.objects.filter(cluster=late, device__isnull=True).exists()
    assert _node_summaries(late) == _node_summaries(ref)


# -- (e) an error in a later kind deletes nothing ---------------------------------------------------


def _without_some_of_each_kind(objects):
    """Drop the last object of every kind (each would be deleted by a clean read)."""
    last = {o["kind"]: i for i, o in enumerate(objects)}
    return [o for i, o in enumerate(objects) if i not in set(last.values())]


def _broken_claim(objects):
    claim = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceClaim"))
    claim["metadata"].update(name="broken-claim", uid="0b0b0b0b-0000-4000-8000-00000000b0b0")
    del claim["metadata"]["namespace"]  # parse_resource_claim rejects it when its batch is written
    return claim


@pytest.mark.parametrize("bad", ["parse", "name"])
def test_an_error_in_a_later_kind_makes_the_run_partial_and_deletes_nothing_of_any_kind(small_batches, bad):
    objects = _fleet()
    cluster = Cluster.objects.create(name="partial")
    first = sync_cluster(cluster, _StreamSource([ReadItem.of(o) for o in copy.deepcopy(objects)], _kinds(objects)))
    assert first.status == "ok", first.errors
    before = _snapshot_of(cluster)
    fewer = copy.deepcopy(_without_some_of_each_kind(objects))
    broken = _broken_claim(objects)
    if bad == "name":
        broken["metadata"]["namespace"] = "Not_A_Namespace"
    # Slices, nodes and classes all come first (flushed in many batches), the broken claim last.
    order = {"DeviceClass": 0, "Node": 1, "ResourceSlice": 2, "ResourceClaim": 3, "Pod": 4}
    fewer.sort(key=lambda o: order.get(o["kind"], 5))
    items = [ReadItem.of(o) for o in fewer if o["kind"] != "Pod"] + [ReadItem.of(broken)] + [ReadItem.of(o) for o in fewer if o["kind"] == "Pod"]
    run = sync_cluster(cluster, _StreamSource(items, _kinds(objects)))
    assert run.status == "partial"
    assert any("broken-claim" in e or "namespace" in e for e in run.errors)
    assert all(c.get("deleted", 0) == 0 for k, c in run.counts.items() if isinstance(c, dict) and k != "skipped")
    after = _snapshot_of(cluster)
    assert after == before
    assert not ResourceClaim.objects.filter(cluster=cluster, name="broken-claim").exists()


def test_a_clean_read_of_the_same_objects_does_delete_the_missing_ones(small_batches):
    # The counterpart of the test above: without the broken claim the same read deletes.
    objects = _fleet()
    cluster = Cluster.objects.create(name="clean")
    apply_read(cluster, _stream_read(objects))
    counts, errors = apply_read(cluster, _stream_read(_without_some_of_each_kind(objects), complete=_kinds(objects)))
    assert not errors
    for kind in ("Node", "ResourceSlice", "ResourceClaim", "Pod", "DeviceClass"):
        assert counts[kind]["deleted"] == 1, kind


# -- (f) the same uid twice in one read ------------------------------------------------------------


def test_a_uid_repeated_across_batches_is_counted_and_stored_once(small_batches):
    objects = _fleet()
    cluster = Cluster.objects.create(name="dupes")
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    claims = [o for o in objects if o["kind"] == "ResourceClaim" and (o.get("status") or {}).get("allocation")]
    # A relisted read: everything, then the first slices and claims again many batches later.
    items = objects + slices[:SMALL + 1] + claims[:SMALL + 1] + objects[:3]
    counts, errors = apply_read(cluster, _stream_read(items, complete=_kinds(objects)))
    assert not errors
    per_kind = Counter(o["kind"] for o in objects)
    for kind in ("ResourceSlice", "ResourceClaim", "Node", "Pod", "DeviceClass"):
        assert counts[kind]["seen"] == per_kind[kind], kind
        assert counts[kind]["created"] == per_kind[kind], kind
    assert ResourceSlice.objects.filter(cluster=cluster).count() == per_kind["ResourceSlice"]
    assert ResourceClaim.objects.filter(cluster=cluster).count() == per_kind["ResourceClaim"]
    want_results = sum(len(o["status"]["allocation"]["devices"]["results"]) for o in claims)
    assert AllocationResult.objects.filter(cluster=cluster).count() == want_results
    want_reserved = sum(len(o["status"].get("reservedFor") or []) for o in claims)
    assert Reservation.objects.filter(claim__cluster=cluster).count() == want_reserved
    ref = Cluster.objects.create(name="once")
    apply_read(ref, _stream_read(objects))
    assert _snapshot_of(cluster) == _snapshot_of(ref)


def test_a_repeated_uid_in_a_compact_snapshot_is_stored_once_and_reported(tmp_path, sync_snapshot, small_batches):
    slices = load_path(H100_SLICES).objects
    path = _write_list(tmp_path / "twice.json", slices + [o for o in _fleet(3) if o["kind"] == "Node"] + slices, separators=(",", ":"))
    run = sync_snapshot(path, name="twice", hooks=False)
    assert run.status == "partial"
    assert len([e for e in run.errors if "appears again" in e]) == len(slices)
    assert run.counts["ResourceSlice"]["seen"] == len(slices)
    assert ResourceSlice.objects.filter(cluster__name="twice").count() == len(slices)


def test_sync_of_a_snapshot_source_streams_file_by_file(tmp_path, small_batches, monkeypatch):
    # The snapshot source is consumed lazily: the first file's slices are stored before the
    # second file is opened.
    (tmp_path / "a.json").write_text(json.dumps({"kind": "List", "items": load_path(H100_SLICES).objects}, separators=(",", ":")))
    (tmp_path / "b.json").write_text(json.dumps({"kind": "List", "items": load_path(VKS_SLICES).objects}, separators=(",", ":")))
    cluster = Cluster.objects.create(name="files")
    import inventory.snapshot as snapshot

    seen_before_b = []
    real = snapshot._file_items

    def spy(path, out):
        if path.name == "b.json":
            seen_before_b.append(ResourceSlice.objects.filter(cluster=cluster).count())
        return real(path, out)

    monkeypatch.setattr(snapshot, "_file_items", spy)
    run = sync_cluster(cluster, SnapshotSource(tmp_path))
    assert run.status == "ok", run.errors
    assert seen_before_b and seen_before_b[0] >= len(load_path(H100_SLICES).objects) - SMALL
    assert seen_before_b[0] > 0


# -- nodes known only from their slices --------------------------------------------------------------


# Regression: at 1dfc2b7 these stand-in rows were deleted and re-created on alternate re-syncs.
def test_identical_resyncs_keep_the_same_nodes_known_only_from_slices():
    case_nodes = [o for o in load_path(CASES / "healthy-cluster-h100/snapshot/cluster.yaml").objects if o["kind"] == "Node"]
    slices = load_path(VKS_SLICES).objects  # name nodes the Node list does not have
    assert not {s["spec"]["nodeName"] for s in slices} & {n["metadata"]["name"] for n in case_nodes}
    cluster = Cluster.objects.create(name="slice-nodes")
    complete = {"ResourceSlice", "Node"}  # a live read: the Node list was read completely
    states, deleted = [], []
    for _ in range(3):
        counts, errors = apply_read(cluster, _stream_read(case_nodes + slices, complete=complete))
        assert not errors
        states.append(set(Node.objects.filter(cluster=cluster).values_list("name", "from_slices")))
        deleted.append(counts["Node"]["deleted"])
    assert states[0] == states[1] == states[2]
    assert deleted[1:] == [0, 0]
