"""A snapshot folder is what it holds: a link inside it to a file elsewhere (a mistake, or a
folder made to read someone else's files) is not read, and the run says which link it
skipped, so it is partial and deletes nothing the link's file may have listed."""

from __future__ import annotations

import shutil

from inventory.models import ResourceSlice, SyncStatus
from tests.conftest import H100_SLICES, VKS_SLICES


def test_a_link_to_a_file_outside_the_folder_is_skipped_and_named(tmp_path, sync_snapshot):
    folder, elsewhere = tmp_path / "snap", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    shutil.copy(H100_SLICES, folder / "slices.yaml")
    shutil.copy(VKS_SLICES, elsewhere / "other.yaml")
    (folder / "linked.yaml").symlink_to(elsewhere / "other.yaml")
    (folder / "again.yaml").symlink_to(folder / "slices.yaml")  # a link within the folder is read

    run = sync_snapshot(folder, "linked")
    assert run.status == SyncStatus.PARTIAL
    assert any("linked.yaml: a link to a file outside the snapshot folder" in e for e in run.errors), run.errors
    nodes = set(ResourceSlice.objects.filter(cluster__name="linked").values_list("node_name", flat=True))
    assert nodes == {"gpu-node-1", "gpu-node-2"}  # none of the linked file's conformance-test nodes
    assert any("again.yaml" in e for e in run.errors)  # its objects came before, under slices.yaml
