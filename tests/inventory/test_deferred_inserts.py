"""Inserts whose end is awaited at the connection's next query (bulk.DeferredInserts): the rows
are there for that query, a batch the server refuses at the end of its COPY is reported row by
row, and a failure while one is open leaves nothing half-written. Run on both databases (on
SQLite the inserts are immediate, and the outcomes must be the same)."""

from __future__ import annotations

import copy
import hashlib

import pytest
from django.db import IntegrityError, transaction

from inventory.bulk import DeferredInserts
from inventory.models import Cluster, Device, Node, Pod, ResourceSlice, SourceKind
from inventory.snapshot import load_path
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from tests.conftest import H100_SLICES, write_list

pytestmark = pytest.mark.django_db(transaction=True)


# Text no btree index entry can hold even compressed (PostgreSQL's limit is about 2.7 KB): what
# the database refuses now that cluster text has no column length.
INCOMPRESSIBLE = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(300))


def _node_row(cluster, name):
    return {"cluster_id": cluster.pk, "uid": f"uid-{name}", "name": name, "raw": {"metadata": {"name": name}}}


@pytest.fixture
def cluster():
    return Cluster.objects.create(name="deferred", source_kind=SourceKind.SNAPSHOT)


def test_rows_of_an_open_insert_are_there_for_the_next_query(cluster):
    outcomes = []
    with transaction.atomic(), DeferredInserts() as later:
        later.insert(Node, [_node_row(cluster, f"n{i}") for i in range(50)], outcomes.append)
        assert Node.objects.filter(cluster=cluster).count() == 50  # this query ends the COPY first
        later.insert(Node, [_node_row(cluster, "last")], outcomes.append)
    assert outcomes == [None, None]
    assert Node.objects.filter(cluster=cluster).count() == 51


def test_a_batch_refused_at_the_end_of_its_copy_reports_and_keeps_the_transaction(cluster):
    Node.objects.create(cluster=cluster, uid="uid-dup", name="dup", raw={})
    outcomes = []
    with transaction.atomic(), DeferredInserts() as later:
        # The unique (cluster, uid) key is checked by the server, after the rows were sent.
        later.insert(Node, [_node_row(cluster, "a"), _node_row(cluster, "dup")], outcomes.append)
        later.settle()
        assert len(outcomes) == 1 and isinstance(outcomes[0], IntegrityError)
        later.insert(Node, [_node_row(cluster, "b")], outcomes.append)
    assert outcomes[1] is None
    # The refused batch is gone as a whole; the transaction went on and kept the next one.
    assert sorted(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["b", "dup"]


def test_an_error_while_an_insert_is_open_rolls_it_back(cluster):
    with pytest.raises(RuntimeError, match="source died"):
        with transaction.atomic(), DeferredInserts() as later:
            later.insert(Node, [_node_row(cluster, "x")], lambda exc: None)
            raise RuntimeError("source died")
    assert not Node.objects.filter(cluster=cluster).exists()


def test_a_device_with_an_overlong_uuid_is_stored_cut_not_refused(tmp_path, cluster):
    # A device uuid longer than an index entry may be is stored cut, ending in "…", on both
    # databases (fields.ClusterTextField): no device, slice or sync is lost to it.
    slices = load_path(H100_SLICES).objects
    odd = copy.deepcopy(slices)
    gpu_slice = next(s for s in odd if s["spec"]["driver"] == "gpu.nvidia.com")
    device = gpu_slice["spec"]["devices"][0]
    device["attributes"]["uuid"] = {"string": "GPU-" + "f" * 5000}
    path = write_list(tmp_path / "s.json", odd)
    run = sync_cluster(cluster, SnapshotSource(path))
    total = sum(len(s["spec"].get("devices") or []) for s in slices)
    assert run.status == "ok", run.errors
    assert Device.objects.filter(cluster=cluster).count() == total == run.counts["Device"]["created"]
    stored = Device.objects.get(cluster=cluster, name=device["name"], pool=gpu_slice["spec"]["pool"]["name"]).uuid
    assert stored.startswith("GPU-fff") and stored.endswith("…") and len(stored) < 5000


def test_a_pod_with_a_uid_no_api_server_gives_fails_only_itself(tmp_path, cluster):
    # A uid past any index entry's size (PostgreSQL failed the whole sync on it): refused by
    # the sync itself, on both databases, as a named problem; the other pods are stored.
    pods = [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"p{i}", "namespace": "ml", "uid": f"pod-{i}" + (INCOMPRESSIBLE if i == 3 else ""),
                      "resourceVersion": "1"},
         # Pods the dashboard keeps (they use a claim): pods that use no GPU are not read.
         "spec": {"nodeName": "n" * 10, "resourceClaims": [{"name": "gpu", "resourceClaimName": f"c{i}"}]},
         "status": {"phase": "Running"}}
        for i in range(6)
    ]  # fmt: skip
    path = write_list(tmp_path / "p.json", pods)
    run = sync_cluster(cluster, SnapshotSource(path))
    stored = set(Pod.objects.filter(cluster=cluster).values_list("name", flat=True))
    assert run.status == "partial" and any(e.startswith("Pod 'p3': metadata.uid is") for e in run.errors), run.errors
    assert stored == {"p0", "p1", "p2", "p4", "p5"}
    assert run.counts["Pod"]["created"] == len(stored)


def test_a_slice_with_a_uid_no_api_server_gives_takes_its_devices_with_it_and_nothing_else(tmp_path, cluster):
    # Refused by the sync itself on both databases (PostgreSQL failed the whole sync on it):
    # its devices are not stored, every other slice's are.
    slices = load_path(H100_SLICES).objects
    odd = copy.deepcopy(slices)
    bad = next(s for s in odd if s["spec"]["driver"] == "gpu.nvidia.com")
    bad["metadata"]["uid"] += INCOMPRESSIBLE
    path = write_list(tmp_path / "s.json", odd)
    run = sync_cluster(cluster, SnapshotSource(path))
    total = sum(len(s["spec"].get("devices") or []) for s in slices)
    assert run.status == "partial"
    assert [e for e in run.errors if "metadata.uid" in e] == run.errors and len(run.errors) == 1, run.errors
    assert not ResourceSlice.objects.filter(cluster=cluster, name=bad["metadata"]["name"]).exists()
    assert Device.objects.filter(cluster=cluster).count() == total - len(bad["spec"]["devices"])
    assert run.counts["ResourceSlice"]["created"] == len(slices) - 1
    assert run.counts["Device"]["created"] == Device.objects.filter(cluster=cluster).count()
    # Every stored device points at a stored slice of this cluster.
    assert not Device.objects.filter(cluster=cluster).exclude(slice__cluster=cluster).exists()


def test_a_claim_whose_allocation_result_is_refused_is_read_again_next_sync(tmp_path, cluster):
    # A result naming a pool no API server serves (PostgreSQL refused it: longer than an index
    # entry) is refused by the sync on both databases; the claim
    # is stored without it and not recorded as read, so every sync reports it until it is fixed.
    from inventory.models import AllocationResult, ResourceClaim
    from tests.conftest import VKS_CLAIM

    claim = copy.deepcopy(load_path(VKS_CLAIM).objects[0])
    claim["metadata"].setdefault("resourceVersion", "7")
    claim["status"]["allocation"]["devices"]["results"][0]["pool"] = "p" + INCOMPRESSIBLE
    path = write_list(tmp_path / "c.json", [claim])
    for _ in range(2):
        run = sync_cluster(cluster, SnapshotSource(path))
        stored = ResourceClaim.objects.get(cluster=cluster)
        assert run.status == "partial"
        assert any(e.startswith("allocation result gpu.nvidia.com/p") and "longer than" in e for e in run.errors), run.errors
        assert stored.resource_version == "" and not AllocationResult.objects.filter(claim=stored).exists()
