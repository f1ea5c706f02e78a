"""``manage.py sync_cluster --snapshot PATH``: a missing path is refused before any cluster is
created, and without ``--cluster`` the cluster is named after the snapshot folder or file."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from inventory.models import Cluster
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db


def test_a_missing_snapshot_path_creates_no_cluster(tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("sync_cluster", snapshot=str(tmp_path / "nope"), cluster="x", stdout=io.StringIO())
    assert not Cluster.objects.exists()


def test_the_cluster_is_named_after_the_snapshot_folder_or_file(tmp_path):
    folder = tmp_path / "vks-a100"
    folder.mkdir()
    shutil.copy(H100_SLICES, folder / "slices.yaml")
    call_command("sync_cluster", snapshot=str(folder), stdout=io.StringIO())
    call_command("sync_cluster", snapshot=str(folder / "slices.yaml"), stdout=io.StringIO())
    assert sorted(Cluster.objects.values_list("name", flat=True)) == ["slices", "vks-a100"]


@pytest.mark.parametrize("name", ["a/b", "A.B", "ünï", "Prod"])
def test_a_cluster_name_that_would_be_changed_is_refused_with_the_name_it_would_be(tmp_path, name):
    # "a/b" and "A.B" would both become "ab": the second sync would delete what the first stored.
    with pytest.raises(CommandError, match=r"did you mean --cluster [a-z]+\?"):
        call_command("sync_cluster", snapshot=str(H100_SLICES), cluster=name, stdout=io.StringIO())
    assert not Cluster.objects.exists()


def test_a_name_made_from_the_path_never_takes_over_a_cluster_of_another_snapshot(tmp_path):
    for team in ("a", "b"):
        (tmp_path / team / "snapshot").mkdir(parents=True)
        shutil.copy(H100_SLICES, tmp_path / team / "snapshot" / "slices.yaml")
    call_command("sync_cluster", snapshot=str(tmp_path / "a" / "snapshot"), stdout=io.StringIO())
    call_command("sync_cluster", snapshot=str(tmp_path / "a" / "snapshot"), stdout=io.StringIO())  # its own: fine
    first = Cluster.objects.get(name="snapshot")
    held = first.devices.count()
    assert held > 0
    with pytest.raises(CommandError, match=r"already syncs from snapshot .*give --cluster NAME"):
        call_command("sync_cluster", snapshot=str(tmp_path / "b" / "snapshot"), stdout=io.StringIO())
    first.refresh_from_db()
    assert first.snapshot_path == str(tmp_path / "a" / "snapshot") and first.devices.count() == held
    # Named on purpose, the other snapshot gets a cluster of its own, or replaces the source.
    call_command("sync_cluster", snapshot=str(tmp_path / "b" / "snapshot"), cluster="team-b", stdout=io.StringIO())
    call_command("sync_cluster", snapshot=str(tmp_path / "b" / "snapshot"), cluster="snapshot", stdout=io.StringIO())
    assert sorted(Cluster.objects.values_list("name", flat=True)) == ["snapshot", "team-b"]


def test_a_relative_snapshot_path_is_kept_absolute_so_other_processes_can_read_it(tmp_path, monkeypatch):
    from django.core.exceptions import ValidationError

    from inventory.runs import run_sync

    (tmp_path / "snap").mkdir()
    shutil.copy(H100_SLICES, tmp_path / "snap" / "slices.yaml")
    monkeypatch.chdir(tmp_path)
    call_command("sync_cluster", snapshot="snap", cluster="rel", stdout=io.StringIO())
    cluster = Cluster.objects.get(name="rel")
    assert cluster.snapshot_path == str(tmp_path / "snap")
    # Sync now and the schedule run elsewhere: they still read it.
    monkeypatch.chdir("/")
    assert run_sync(cluster).status == "ok"
    # A relative path typed in the admin is refused with the reason.
    cluster.snapshot_path = "snap"
    with pytest.raises(ValidationError, match="relative path"):
        cluster.full_clean()


def test_a_relative_path_that_is_gone_says_where_it_was_read_from(tmp_path, monkeypatch):
    from inventory.runs import run_sync

    cluster = Cluster.objects.create(name="old", snapshot_path="was/here")  # stored before paths were kept absolute
    monkeypatch.chdir(tmp_path)
    run = run_sync(cluster)
    assert run.status == "failed" and f"relative path, read from {tmp_path}" in run.error


def test_a_kubeconfig_cluster_stored_with_its_path_as_typed_is_still_its_own_source(tmp_path, monkeypatch):
    from pathlib import Path

    from inventory.management.commands.sync_cluster import _other_source
    from inventory.models import SourceKind

    monkeypatch.setenv("HOME", str(tmp_path))
    # Stored by a release that kept the path as typed; the command now gives it absolute.
    cluster = Cluster.objects.create(name="ctx1", source_kind=SourceKind.KUBECONFIG,
                                     kubeconfig_path="~/.kube/config", kube_context="ctx1")
    given = {"kubeconfig_path": str(Path("~/.kube/config").expanduser().absolute()), "kube_context": "ctx1"}
    assert not _other_source(cluster, SourceKind.KUBECONFIG, given)
    assert _other_source(cluster, SourceKind.KUBECONFIG, {**given, "kube_context": "ctx2"})
    assert _other_source(cluster, SourceKind.KUBECONFIG, {**given, "kubeconfig_path": str(tmp_path / "other")})
