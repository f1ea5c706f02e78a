"""``sync_cluster --kubeconfig NEW --cluster NAME`` for a live cluster already synced: the
second read is a watch that saw nothing new (no object counted), yet it read the cluster
cleanly, so NEW is the source from then on (rotated credentials); a kubeconfig naming a dead
server fails and leaves the working one."""

from __future__ import annotations

import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from inventory.models import Cluster, SyncRun, SyncStatus


def test_a_rotated_kubeconfig_is_kept_and_a_dead_one_is_not(fake, live_settings, tmp_path, db):
    call_command("sync_cluster", "--kubeconfig", str(fake.kubeconfig), "--cluster", "live")
    rotated = tmp_path / "rotated-kubeconfig"
    shutil.copy(fake.kubeconfig, rotated)
    call_command("sync_cluster", "--kubeconfig", str(rotated), "--cluster", "live")
    assert SyncRun.objects.filter(cluster__name="live").latest("pk").status == SyncStatus.OK
    assert Cluster.objects.get(name="live").kubeconfig_path == str(rotated)

    dead = fake.write_kubeconfig(tmp_path / "dead-kubeconfig", "https://127.0.0.1:9")
    with pytest.raises(CommandError):
        call_command("sync_cluster", "--kubeconfig", str(dead), "--cluster", "live")
    assert Cluster.objects.get(name="live").kubeconfig_path == str(rotated)
