"""bulk.insert_rows / update_rows write what the ORM reads back, on the configured database."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from django.db import IntegrityError, transaction

from inventory.bulk import BATCH, RawJSON, delete_pks, insert_rows, update_rows
from inventory.models import Cluster, Node, Reservation, ResourceClaim, SyncRun
from tests.conftest import VKS_CLAIM

pytestmark = pytest.mark.django_db

UTC = dt.UTC
PLUS2 = dt.timezone(dt.timedelta(hours=2))
HOSTILE = 'tab\there, newline\nthere, back\\slash, quote " and </script>, COPY end \\.'


@pytest.fixture
def cluster():
    return Cluster.objects.create(name="bulk")


def _claim_obj():
    return yaml.safe_load(VKS_CLAIM.read_text())["items"][0]


def test_json_values_datetimes_and_none_round_trip(cluster):
    created = dt.datetime(2026, 10, 3, 16, 0, 5, 123456, tzinfo=UTC)
    allocated = dt.datetime(2026, 10, 3, 18, 30, 0, tzinfo=PLUS2)  # 16:30 UTC
    obj = _claim_obj()
    n = insert_rows(ResourceClaim, [{
        "cluster_id": cluster.pk, "uid": "u-1", "name": "c1", "resource_version": "7", "raw": obj,
        "namespace": "ns", "state": "in_use", "created": created, "allocated_at": allocated,
        "deletion_timestamp": None, "requests": [{"name": "gpu", "count": 1}], "device_count": 1, "node_name": "n1",
    }])  # fmt: skip
    assert n == 1
    c = ResourceClaim.objects.get(uid="u-1")
    assert c.raw == obj
    assert c.requests == [{"name": "gpu", "count": 1}]
    assert c.created == created and c.created.tzinfo is not None
    assert c.allocated_at == allocated
    assert c.allocated_at.astimezone(UTC).hour == 16
    assert c.deletion_timestamp is None
    assert (c.state, c.device_count, c.node_name, c.resource_version) == ("in_use", 1, "n1", "7")


def test_raw_json_text_is_stored_as_given_and_reads_back_as_the_object(cluster):
    obj = _claim_obj()
    obj["metadata"]["labels"] = {"x": HOSTILE, "u": "GPU ☃ 日本 \U0001f680"}
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    insert_rows(ResourceClaim, [{"cluster_id": cluster.pk, "uid": "u-1", "name": "c", "namespace": "ns", "raw": RawJSON(text)}])
    assert ResourceClaim.objects.get().raw == obj


def test_a_plain_string_in_a_json_column_stays_a_string(cluster):
    # Only RawJSON is taken as JSON text; any other str is a JSON string value.
    insert_rows(ResourceClaim, [{"cluster_id": cluster.pk, "uid": "u-1", "name": "c", "namespace": "ns", "raw": '{"a": 1}'}])
    assert ResourceClaim.objects.get().raw == '{"a": 1}'


def test_empty_and_scalar_json_values_round_trip(cluster):
    rows = [
        {"cluster_id": cluster.pk, "uid": f"u-{i}", "name": f"c{i}", "namespace": "ns", "raw": raw, "requests": req}
        for i, (raw, req) in enumerate([({}, []), ({"k": [1, 2.5, True, None]}, [False]), ({"n": 0}, ["", 0])])
    ]
    insert_rows(ResourceClaim, rows)
    got = dict(ResourceClaim.objects.values_list("uid", "raw"))
    assert got == {"u-0": {}, "u-1": {"k": [1, 2.5, True, None]}, "u-2": {"n": 0}}
    assert ResourceClaim.objects.get(uid="u-1").requests == [False]
    assert ResourceClaim.objects.get(uid="u-2").requests == ["", 0]


def test_booleans_and_defaults_of_omitted_columns(cluster):
    insert_rows(Node, [
        {"cluster_id": cluster.pk, "uid": "Node//a", "name": "a", "from_slices": True, "ready": False},
        {"cluster_id": cluster.pk, "uid": "Node//b", "name": "b", "from_slices": False, "ready": True},
    ])  # fmt: skip
    a, b = Node.objects.get(name="a"), Node.objects.get(name="b")
    assert (a.from_slices, a.ready, b.from_slices, b.ready) == (True, False, False, True)
    # Omitted: the model's defaults, exactly as Node(...).save() would give.
    ref = Node(cluster=cluster, uid="ref", name="ref")
    for f in ("unschedulable", "labels", "raw", "gpu_count", "free_count", "kubelet_version", "gpu_product", "resource_version"):
        assert getattr(a, f) == getattr(ref, f), f
    assert a.labels == {} and a.raw == {} and a.unschedulable is False and a.gpu_count == 0


def test_strings_with_copy_and_sql_metacharacters_are_stored_verbatim(cluster):
    insert_rows(Node, [{"cluster_id": cluster.pk, "uid": "u", "name": "n", "kubelet_version": HOSTILE[:64],
                        "gpu_product": HOSTILE, "labels": {HOSTILE: HOSTILE}}])  # fmt: skip
    n = Node.objects.get()
    assert n.gpu_product == HOSTILE and n.kubelet_version == HOSTILE[:64]
    assert n.labels == {HOSTILE: HOSTILE}


def test_an_unknown_column_is_a_value_error_and_writes_nothing(cluster):
    with pytest.raises(ValueError, match="no column"), transaction.atomic():
        insert_rows(Node, [{"cluster_id": cluster.pk, "uid": "u", "name": "n", "colour": "red"}])
    with pytest.raises(ValueError, match="no column"), transaction.atomic():
        insert_rows(Node, [
            {"cluster_id": cluster.pk, "uid": "u1", "name": "n1"},
            {"cluster_id": cluster.pk, "uid": "u2", "colour": "red"},  # same width, one name swapped
        ])  # fmt: skip
    assert not Node.objects.exists()


# Regression: at 3cb38b4 on PostgreSQL the ValueError was raised inside the open COPY and aborted the transaction.
def test_an_unknown_column_leaves_the_callers_transaction_usable(cluster):
    with pytest.raises(ValueError, match="no column"):
        insert_rows(Node, [{"cluster_id": cluster.pk, "uid": "u", "name": "n", "colour": "red"}])
    assert Node.objects.count() == 0


# Regression: at 1dfc2b7 a later row omitting a column the first row named raised KeyError.
def test_a_later_row_may_omit_a_column_the_first_row_named(cluster):
    insert_rows(Node, [
        {"cluster_id": cluster.pk, "uid": "u1", "name": "n1", "ready": False},
        {"cluster_id": cluster.pk, "uid": "u2", "name": "n2"},
    ])  # fmt: skip
    assert dict(Node.objects.values_list("name", "ready")) == {"n1": False, "n2": True}


def test_rows_may_name_their_columns_in_any_order_and_add_omitted_ones(cluster):
    insert_rows(Node, [
        {"cluster_id": cluster.pk, "uid": "u1", "name": "n1"},
        {"name": "n2", "uid": "u2", "cluster_id": cluster.pk},
        {"cluster_id": cluster.pk, "uid": "u3", "name": "n3", "ready": False, "gpu_count": 8},
    ])  # fmt: skip
    got = {n.name: (n.uid, n.ready, n.gpu_count) for n in Node.objects.all()}
    assert got == {"n1": ("u1", True, 0), "n2": ("u2", True, 0), "n3": ("u3", False, 8)}


# Regression: at 3cb38b4 on PostgreSQL COPY raised psycopg's UniqueViolation, not django.db.IntegrityError.
def test_a_duplicate_natural_key_raises_django_integrity_error(cluster):
    row = {"cluster_id": cluster.pk, "uid": "same", "name": "n"}
    insert_rows(Node, [row])
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(Node, [dict(row, name="other")])


def test_many_rows_across_batches_are_all_written(cluster):
    ResourceClaim.objects.create(cluster=cluster, uid="c", name="c", namespace="ns")
    claim = ResourceClaim.objects.get()
    rows = ({"claim_id": claim.pk, "resource": "pods", "name": f"p{i}", "uid": f"pod-{i}"} for i in range(2 * BATCH + 7))
    assert insert_rows(Reservation, rows) == 2 * BATCH + 7
    assert Reservation.objects.filter(claim=claim).count() == 2 * BATCH + 7
    assert set(Reservation.objects.values_list("uid", flat=True)) == {f"pod-{i}" for i in range(2 * BATCH + 7)}


def test_no_rows_write_nothing():
    assert insert_rows(Node, []) == 0
    assert update_rows(Node, ["ready"], []) == 0


def test_update_rows_changes_only_the_named_columns_of_the_given_rows(cluster):
    insert_rows(ResourceClaim, [
        {"cluster_id": cluster.pk, "uid": f"u{i}", "name": f"c{i}", "namespace": "ns", "state": "pending", "raw": {"i": i}}
        for i in range(3)
    ])  # fmt: skip
    pk = dict(ResourceClaim.objects.values_list("uid", "pk"))
    when = dt.datetime(2026, 11, 30, 9, 15, 0, 500, tzinfo=PLUS2)
    obj = _claim_obj()
    sent = update_rows(ResourceClaim, ["state", "allocated_at", "raw", "requests"], [
        (pk["u0"], {"state": "allocated", "allocated_at": when, "raw": RawJSON(json.dumps(obj)), "requests": [{"n": 1}]}),
        (pk["u2"], {"state": "in_use", "allocated_at": None, "raw": {"x": HOSTILE}, "requests": []}),
    ])  # fmt: skip
    assert sent == 2
    c0, c1, c2 = (ResourceClaim.objects.get(uid=f"u{i}") for i in range(3))
    assert (c0.state, c0.allocated_at, c0.raw, c0.requests) == ("allocated", when, obj, [{"n": 1}])
    assert (c2.state, c2.allocated_at, c2.raw, c2.requests) == ("in_use", None, {"x": HOSTILE}, [])
    assert (c1.state, c1.raw) == ("pending", {"i": 1})
    assert c0.name == "c0" and c0.namespace == "ns"  # unnamed columns untouched


def test_update_rows_sets_booleans_and_foreign_keys(cluster):
    other = Cluster.objects.create(name="other")
    insert_rows(Node, [{"cluster_id": cluster.pk, "uid": "u", "name": "n"}])
    node = Node.objects.get()
    update_rows(Node, ["ready", "unschedulable", "cluster_id"], [(node.pk, {"ready": False, "unschedulable": True, "cluster_id": other.pk})])
    node.refresh_from_db()
    assert (node.ready, node.unschedulable, node.cluster_id) == (False, True, other.pk)


def test_datetimes_written_by_bulk_compare_like_orm_written_ones(cluster):
    t0 = dt.datetime(2026, 10, 3, 16, 0, 0, tzinfo=UTC)
    insert_rows(SyncRun, [{"cluster_id": cluster.pk, "source": "s", "started": t0 + dt.timedelta(minutes=i)} for i in range(3)])
    SyncRun.objects.create(cluster=cluster, source="orm", started=t0 + dt.timedelta(seconds=90))
    order = list(SyncRun.objects.order_by("started").values_list("source", "started"))
    assert [s for s, _ in order] == ["s", "s", "orm", "s"]
    assert SyncRun.objects.filter(started__gt=t0 + dt.timedelta(seconds=60)).count() == 2
    run = SyncRun.objects.filter(source="s").order_by("started").first()
    assert run.status == "running" and run.counts == {} and run.errors == [] and run.finished is None


def test_delete_pks_removes_exactly_the_given_rows_with_cascades(cluster):
    insert_rows(ResourceClaim, [{"cluster_id": cluster.pk, "uid": f"u{i}", "name": f"c{i}", "namespace": "ns"} for i in range(5)])
    pks = sorted(ResourceClaim.objects.values_list("pk", flat=True))
    insert_rows(Reservation, [{"claim_id": pks[0], "resource": "pods", "name": "p", "uid": "pod"}])
    assert delete_pks(ResourceClaim, pks[:2]) == 2
    assert sorted(ResourceClaim.objects.values_list("pk", flat=True)) == pks[2:]
    assert not Reservation.objects.exists()


def test_bytes_rows_round_trip_with_every_column_type_they_hold(cluster):
    """A table with a bytes column goes through a binary COPY on PostgreSQL: every byte value
    (NUL, the COPY end marker, high bytes, empty), text with NUL, a small int and a time come back."""
    from inventory.models import ModelChunk

    blobs = [bytes(range(256)) * 64, b"", b"\\.\n\x00", "日本 \U0001f680".encode()]
    basis = dt.datetime(2026, 10, 3, 18, 30, 0, 5, tzinfo=PLUS2)
    rows = [{"cluster_id": cluster.pk, "kind": f"K\x00{i}" if i == 1 else HOSTILE, "bucket": 31 - i, "record_type": str(i),
             "count": 10**9 + i, "data": blob, "basis": basis if i else None} for i, blob in enumerate(blobs)]
    assert insert_rows(ModelChunk, rows) == 4
    got = {r.record_type: r for r in ModelChunk.objects.filter(cluster=cluster)}
    for i, blob in enumerate(blobs):
        r = got[str(i)]
        assert bytes(r.data) == blob
        assert (r.bucket, r.count, r.fingerprint) == (31 - i, 10**9 + i, "")
        assert r.basis == (basis if i else None)
    assert got["0"].kind == HOSTILE
    assert got["1"].kind in ("K\x001", "K\ufffd1")  # PostgreSQL text refuses NUL: U+FFFD in its place


def test_a_refused_bytes_row_keeps_the_transaction_usable(cluster):
    from inventory.models import ModelChunk

    row = {"cluster_id": cluster.pk, "kind": "Pod", "bucket": 1, "record_type": "t", "data": b"x"}
    insert_rows(ModelChunk, [row])
    with transaction.atomic():
        with pytest.raises(IntegrityError):
            insert_rows(ModelChunk, [dict(row, data=b"y")])  # the (cluster, kind, bucket, type) key
        assert bytes(ModelChunk.objects.get(cluster=cluster).data) == b"x"
