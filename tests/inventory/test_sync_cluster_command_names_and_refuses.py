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
