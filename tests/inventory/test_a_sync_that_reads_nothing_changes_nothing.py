"""A sync whose read yields no object (a file of an unknown API version, a slice without its
spec, a file that is not YAML) changes nothing: no analysis runs again, so no finding is
resolved for want of the scrapes that file did not carry, the recorded DCGM history stays,
and the cluster keeps the source it syncs from (Sync now and the schedule read that)."""

from __future__ import annotations

import json
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from claims.models import Finding
from inventory.models import Cluster, RecordedSeries, SyncRun, SyncStatus
from tests.conftest import CASES
from tests.telemetry.pagedata import h200_range_answer, h200_slice_folder

pytestmark = pytest.mark.django_db

CASE = CASES / "dcgm-exporter-no-pod-labels-on-dra-node" / "snapshot"
UNKNOWN_VERSION = {"apiVersion": "resource.k8s.io/v9", "kind": "ResourceSlice",
                   "metadata": {"name": "n1-gpu", "uid": "0b1c"}, "spec": {"driver": "gpu.nvidia.com"}}


def _open_findings(name):
    return set(Finding.objects.filter(cluster__name=name, resolved_at__isnull=True).values_list("category", "pk"))


@pytest.mark.parametrize("bad", ["v9.json", "garbage.yaml"])
def test_a_read_of_nothing_keeps_findings_and_source(tmp_path, bad):
    folder = tmp_path / "case"
    shutil.copytree(CASE, folder)
    call_command("sync_cluster", "--snapshot", str(folder), "--cluster", "dcgm")
    before = _open_findings("dcgm")
    assert "metrics_pod_attribution_missing" in {c for c, _ in before}
    path = tmp_path / bad
    path.write_text(json.dumps(UNKNOWN_VERSION) if bad.endswith(".json") else "kind: [unclosed\n  - {")

    with pytest.raises(CommandError):
        call_command("sync_cluster", "--snapshot", str(path), "--cluster", "dcgm")
    run = SyncRun.objects.filter(cluster__name="dcgm").latest("pk")
    assert run.status in (SyncStatus.PARTIAL, SyncStatus.FAILED) and str(path) in run.source
    assert _open_findings("dcgm") == before
    assert Cluster.objects.get(name="dcgm").snapshot_path == str(folder)


def test_a_read_of_nothing_keeps_the_recorded_history(tmp_path):
    folder = h200_slice_folder(tmp_path / "h200")
    (folder / "h200-history.range.json").write_text(json.dumps(h200_range_answer()))
    call_command("sync_cluster", "--snapshot", str(folder), "--cluster", "h200")
    kept = RecordedSeries.objects.filter(cluster__name="h200").count()
    assert kept
    (tmp_path / "v9.json").write_text(json.dumps(UNKNOWN_VERSION))
    with pytest.raises(CommandError):
        call_command("sync_cluster", "--snapshot", str(tmp_path / "v9.json"), "--cluster", "h200")
    assert RecordedSeries.objects.filter(cluster__name="h200").count() == kept


def test_a_first_sync_that_fails_leaves_no_cluster(tmp_path):
    bad = tmp_path / "garbage.yaml"
    bad.write_text("kind: [unclosed\n  - {")
    with pytest.raises(CommandError, match="invalid YAML"):
        call_command("sync_cluster", "--snapshot", str(bad), "--cluster", "bad")
    assert not Cluster.objects.filter(name="bad").exists()


def test_devices_deleted_with_their_slices_are_counted(sync_snapshot):
    """A snapshot of other slices replacing the cluster's: the devices of the slices deleted
    go with them, and the run's counts say how many."""
    from inventory.models import Device
    from tests.conftest import H100_SLICES, VKS_SLICES

    sync_snapshot(H100_SLICES, "swap")
    before = Device.objects.filter(cluster__name="swap").count()
    run = sync_snapshot(VKS_SLICES, "swap")
    after = Device.objects.filter(cluster__name="swap").count()
    assert run.status == SyncStatus.OK and run.counts["ResourceSlice"]["deleted"] > 0
    assert run.counts["Device"]["deleted"] == before and run.counts["Device"]["created"] == after


def test_a_clean_read_keeps_its_source_even_when_it_saw_nothing_new(tmp_path):
    """A read with no problems is the cluster's source from then on: a snapshot of one empty
    typed list (kubectl's output once the last claim is gone) deletes the stored claims and
    is what the schedule reads next, not the folder before it."""
    shutil.copytree(CASE, tmp_path / "case")
    call_command("sync_cluster", "--snapshot", str(tmp_path / "case"), "--cluster", "dcgm")
    empty = tmp_path / "claims.json"
    empty.write_text(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimList", "items": []}))
    call_command("sync_cluster", "--snapshot", str(empty), "--cluster", "dcgm")
    run = SyncRun.objects.filter(cluster__name="dcgm").latest("pk")
    assert run.status == SyncStatus.OK and run.counts["ResourceClaim"]["deleted"] >= 1
    assert Cluster.objects.get(name="dcgm").snapshot_path == str(empty)


def test_a_first_sync_that_reads_nothing_leaves_no_cluster(tmp_path):
    folder = tmp_path / "first"
    folder.mkdir()
    (folder / "broken.yaml").write_text("kind: [unclosed\n  - {")
    shutil.copy(CASE / "dcgm-exporter-gpu-node-01.prom", folder)
    with pytest.raises(CommandError):
        call_command("sync_cluster", "--snapshot", str(folder), "--cluster", "first")
    assert not Cluster.objects.filter(name="first").exists()


def test_a_range_file_that_breaks_keeps_its_recorded_series(tmp_path, sync_snapshot):
    """Two range files recorded; one is truncated before the next sync: that read is partial,
    the readable file's series are replaced, the broken file's stay as recorded."""
    answer = h200_range_answer()
    fields = [s["metric"]["__name__"] for s in answer["data"]["result"]]
    assert len(fields) >= 2
    one = {**answer, "data": {**answer["data"], "result": answer["data"]["result"][:1]}}
    rest = {**answer, "data": {**answer["data"], "result": answer["data"]["result"][1:]}}
    folder = h200_slice_folder(tmp_path / "h200")
    (folder / "a.range.json").write_text(json.dumps(one))
    (folder / "b.range.json").write_text(json.dumps(rest))
    assert sync_snapshot(folder, "two-files").status == SyncStatus.OK
    before = set(RecordedSeries.objects.filter(cluster__name="two-files").values_list("source", "field"))
    assert {s for s, _ in before} == {"a.range.json", "b.range.json"}

    (folder / "b.range.json").write_text(json.dumps(rest)[:500])
    run = sync_snapshot(folder, "two-files")
    assert run.status == SyncStatus.PARTIAL and any("b.range.json" in e for e in run.errors), run.errors
    assert set(RecordedSeries.objects.filter(cluster__name="two-files").values_list("source", "field")) == before


def test_a_partial_read_that_changed_a_claim_moves_the_clusters_state(tmp_path, sync_snapshot):
    """The converse: a read with a problem (one object of an unknown API version) that also
    updated a claim changed the cluster: its state moves on (what the stored model, the
    overview and the next sync's basis follow), and the claim's new status is stored."""
    import copy

    from inventory import stored_model
    from inventory.models import ResourceClaim
    from inventory.snapshot import load_path
    from tests.conftest import VKS_CLAIM, VKS_SLICES, write_list

    slices, claim = load_path(VKS_SLICES).objects, load_path(VKS_CLAIM).objects[0]
    assert sync_snapshot(write_list(tmp_path / "a.json", [*slices, claim]), "moved").status == SyncStatus.OK
    cluster = Cluster.objects.get(name="moved")
    before = cluster.data_changed_at
    later = copy.deepcopy(claim)
    later["metadata"]["resourceVersion"] = "999999"
    del later["status"]["reservedFor"]
    run = sync_snapshot(write_list(tmp_path / "b.json", [*slices, later, UNKNOWN_VERSION]), "moved")
    assert run.status == SyncStatus.PARTIAL and run.counts["ResourceClaim"]["updated"] == 1
    cluster.refresh_from_db()
    assert cluster.data_changed_at > before
    assert ResourceClaim.objects.get(cluster=cluster).resource_version == "999999"
    assert stored_model.load(cluster.pk, cluster.data_changed_at) is not None
