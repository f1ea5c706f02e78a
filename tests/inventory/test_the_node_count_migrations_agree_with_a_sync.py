"""The data steps of the migrations that added ``Node.free_gpu_count``,
``Node.plugin_gpu_count`` and ``Node.plugin_mig_count`` count stored rows as a sync counts them:
an older pool generation offers nothing, a pool listing a device twice has nothing free, and
the device plugin's GPUs and MIG instances are what ``status.allocatable`` holds. Run on real slices and nodes, the counts they write
equal what the sync wrote (a no-change re-sync never rewrites them)."""

from __future__ import annotations

import copy
import importlib

import pytest
from django.apps import apps

from inventory.models import Node
from inventory.snapshot import load_path
from tests.conftest import H100_SLICES, write_list

free_step = importlib.import_module("inventory.migrations.0015_node_free_gpu_count")
plugin_step = importlib.import_module("inventory.migrations.0016_node_plugin_gpu_count")
mig_step = importlib.import_module("inventory.migrations.0018_node_plugin_mig_count")


def _counts():
    return [dict(Node.objects.values_list("pk", c)) for c in ("free_gpu_count", "plugin_gpu_count", "plugin_mig_count")]


@pytest.mark.django_db
def test_the_data_steps_give_the_counts_a_sync_gives(tmp_path, sync_snapshot, settings):
    objs = load_path(H100_SLICES).objects
    gpu = [o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com"]
    # An older generation of the first GPU pool listing a GPU the newest one does not.
    old = copy.deepcopy(gpu[0])
    old["metadata"].update(name=old["metadata"]["name"] + "-old", uid=old["metadata"]["uid"][:-3] + "old")
    old["spec"]["pool"]["generation"] -= 1
    old["spec"]["devices"] = [dict(old["spec"]["devices"][0], name="gpu-99")]
    sync_snapshot(write_list(tmp_path / "superseded.json", [*objs, old]), "superseded")
    # A second slice of the other GPU pool listing one of its GPUs again: an invalid pool.
    twin = copy.deepcopy(gpu[1])
    twin["metadata"].update(name=twin["metadata"]["name"] + "-b", uid=twin["metadata"]["uid"][:-1] + "b")
    twin["spec"]["devices"] = twin["spec"]["devices"][:1]
    gpu[1]["spec"]["pool"]["resourceSliceCount"] = twin["spec"]["pool"]["resourceSliceCount"] = 2
    sync_snapshot(write_list(tmp_path / "invalid.json", [*objs, twin]), "invalid")
    sync_snapshot(settings.BASE_DIR / "demo" / "migration" / "legacy-dp", "legacy-dp")

    synced = _counts()
    assert all(any(c.values()) for c in synced)
    assert Node.objects.get(cluster__name="invalid", name=gpu[1]["spec"]["nodeName"]).free_gpu_count == 0
    Node.objects.update(free_gpu_count=0, plugin_gpu_count=0, plugin_mig_count=0)  # as the columns are added
    free_step.count_free_gpus(apps, None)
    plugin_step.count_plugin_gpus(apps, None)
    mig_step.count_plugin_migs(apps, None)
    assert _counts() == synced
