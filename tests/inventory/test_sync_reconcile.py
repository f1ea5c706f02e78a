"""Reconcile by uid: create, update changed, delete vanished; never delete on a bad read."""

from __future__ import annotations

import copy

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Cluster, Device, ResourceSlice
from inventory.sources import ReadResult, SnapshotSource
from inventory.sync import apply_read, sync_cluster
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db


def _slices():
    return [o for o in yaml.safe_load(H100_SLICES.read_text())["items"]]


def _read(objects, errors=()):
    return ReadResult(objects=copy.deepcopy(objects), complete_kinds={"ResourceSlice"}, errors=list(errors))


@pytest.fixture
def cluster():
    return Cluster.objects.create(name="c1")


def test_no_change_resync_writes_no_rows(cluster):
    objs = _slices()
    apply_read(cluster, _read(objs))
    with CaptureQueriesContext(connection) as ctx:
        counts, errors = apply_read(cluster, _read(objs))
    writes = [q["sql"] for q in ctx.captured_queries if q["sql"].split()[0].upper() in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []
    assert counts["ResourceSlice"]["unchanged"] == 4 and not errors


def test_changed_resource_version_updates_devices_in_place(cluster):
    objs = _slices()
    apply_read(cluster, _read(objs))
    gpu = Device.objects.get(pool="gpu-node-1", name="gpu-1")
    gpu.metrics = {"DCGM_FI_DEV_GPU_TEMP": 30.0}
    gpu.save()
    changed = copy.deepcopy(objs)
    s = next(o for o in changed if o["metadata"]["name"].startswith("gpu-node-1-gpu"))
    s["metadata"]["resourceVersion"] = "9999999"
    s["spec"]["devices"][0]["attributes"]["driverVersion"] = {"version": "580.105.9"}
    counts, _ = apply_read(cluster, _read(changed))
    assert counts["ResourceSlice"]["updated"] == 1
    again = Device.objects.get(pool="gpu-node-1", name="gpu-1")
    assert again.pk == gpu.pk  # stable key keeps metrics and allocations attached
    assert again.driver_version == "580.105.9"
    assert again.metrics == {"DCGM_FI_DEV_GPU_TEMP": 30.0}


def test_vanished_slice_is_deleted_with_its_devices_on_a_clean_read(cluster):
    objs = _slices()
    apply_read(cluster, _read(objs))
    counts, _ = apply_read(cluster, _read(objs[:2]))
    assert counts["ResourceSlice"]["deleted"] == 2
    assert ResourceSlice.objects.count() == 2
    assert set(Device.objects.values_list("node_name", flat=True)) == {"gpu-node-1"}


def test_a_read_with_errors_deletes_nothing(cluster):
    objs = _slices()
    apply_read(cluster, _read(objs))
    counts, errors = apply_read(cluster, _read(objs[:1], errors=["list ResourceSlice (v1): HTTP 500"]))
    assert counts["ResourceSlice"]["deleted"] == 0
    assert ResourceSlice.objects.count() == 4 and Device.objects.count() == 20
    assert errors


def test_malformed_object_makes_the_run_partial_and_keeps_what_was_stored(cluster, tmp_path):
    objs = _slices()
    apply_read(cluster, _read(objs))
    broken = copy.deepcopy(objs[:3])
    del broken[0]["spec"]["driver"]
    # A real change moves resourceVersion (same-version objects are skipped undecoded).
    broken[0]["metadata"]["resourceVersion"] = "broken-1"
    f = tmp_path / "broken.yaml"
    f.write_text(yaml.safe_dump_all(broken))
    run = sync_cluster(cluster, SnapshotSource(f))
    assert run.status == "partial"
    assert "no spec.driver" in run.error
    assert ResourceSlice.objects.count() == 4


def test_kinds_absent_from_a_snapshot_are_left_alone(cluster, tmp_path, sync_snapshot):
    from tests.conftest import VKS_CLAIM, VKS_SLICES

    sync_snapshot(VKS_SLICES, name="c1", hooks=False)
    run = sync_snapshot(VKS_CLAIM, name="c1", hooks=False)
    assert run.status == "ok"
    assert ResourceSlice.objects.filter(cluster=cluster).count() == 2


def test_hostile_strings_in_free_text_fields_are_stored_verbatim(cluster):
    objs = _slices()[:1]
    objs[0]["metadata"]["labels"] = {"x": "<script>alert(1)</script>"}
    objs[0]["spec"]["devices"][0]["attributes"]["type"] = {"string": "<img src=x onerror=alert(1)>"}
    apply_read(cluster, _read(objs))
    assert Device.objects.filter(type_raw="<img src=x onerror=alert(1)>").exists()


def test_names_an_api_server_would_reject_are_not_stored_and_make_the_run_partial(cluster, tmp_path):
    from inventory.models import ResourceClaim

    claims = yaml.safe_load((H100_SLICES.parent.parent / "claims-with-status/vks-resourceclaim-allocated-reserved.v1.yaml").read_text())["items"]
    good = claims[0]
    bad_ns = copy.deepcopy(good)
    bad_ns["metadata"]["namespace"] = "ns-<script>alert(1)</script>"
    bad_ns["metadata"]["uid"] = "evil-1"
    bad_name = copy.deepcopy(good)
    bad_name["metadata"]["name"] = "a/b"
    bad_name["metadata"]["uid"] = "evil-2"
    f = tmp_path / "hostile.yaml"
    f.write_text(yaml.safe_dump_all([good, bad_ns, bad_name]))
    run = sync_cluster(cluster, SnapshotSource(f))
    assert run.status == "partial"
    assert any("not a valid Kubernetes namespace" in e for e in run.errors)
    assert any("not a valid Kubernetes name" in e for e in run.errors)
    assert list(ResourceClaim.objects.values_list("name", flat=True)) == [good["metadata"]["name"]]


def test_a_device_name_longer_than_a_dns_label_rejects_its_slice(cluster):
    objs = _slices()[1:2]
    objs[0]["spec"]["devices"][0]["name"] = "g" * 300
    _, errors = apply_read(cluster, _read(objs))
    assert any("is not a DNS label" in e for e in errors)
    assert ResourceSlice.objects.count() == 0


def test_devices_belong_to_their_slices_cluster_and_go_with_it(cluster):
    # Device.cluster is a copy of its slice's cluster that the database does not check itself.
    other = Cluster.objects.create(name="c2")
    apply_read(cluster, _read(_slices()))
    apply_read(other, _read(_slices()))
    for c in (cluster, other):
        assert Device.objects.filter(cluster=c).count() == Device.objects.filter(slice__cluster=c).count() > 0
    kept = Device.objects.filter(cluster=other).count()
    cluster.delete()
    assert not Device.objects.filter(cluster_id=cluster.pk).exists()
    assert Device.objects.count() == kept
