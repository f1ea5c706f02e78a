"""Pools as the scheduler sees them: within a pool only the newest generation publishes
devices. A driver that re-creates its ResourceSlices (its kubelet plugin restarted: new names
and uids, same pool, higher generation, same devices) is an ordinary change; the same device
twice in one generation is a conflict of that pool alone."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import H100_SLICES, write_list


def _objects():
    from inventory.snapshot import load_path

    return load_path(H100_SLICES).objects


def _recreated(objs, suffix="r2"):
    """The same slices as the driver publishes them after a restart."""
    out = copy.deepcopy(objs)
    for o in out:
        if o["kind"] == "ResourceSlice":
            o["metadata"]["name"] += f"-{suffix}"
            o["metadata"]["uid"] = o["metadata"]["uid"][:-len(suffix)] + suffix
            o["metadata"]["resourceVersion"] = f"{o['metadata'].get('resourceVersion', '1')}{suffix}"
            o["spec"]["pool"]["generation"] += 1
    return out


@pytest.fixture
def synced(tmp_path, sync_snapshot):
    from inventory.models import Cluster, Device, SyncStatus

    objs = _objects()
    run = sync_snapshot(write_list(tmp_path / "v1.json", objs), "pools")
    assert run.status == SyncStatus.OK, run.errors
    cluster = Cluster.objects.get(name="pools")
    return cluster, objs, dict(Device.objects.filter(cluster=cluster).values_list("name", "pk"))


def test_recreated_slices_give_an_ok_run_and_the_old_slices_are_gone(tmp_path, synced, sync_snapshot):
    from inventory.models import Device, ResourceSlice, SyncStatus

    cluster, objs, pks_before = synced
    old_uids = set(ResourceSlice.objects.filter(cluster=cluster).values_list("uid", flat=True))
    new = _recreated(objs)
    run = sync_snapshot(write_list(tmp_path / "v2.json", new), "pools")
    assert run.status == SyncStatus.OK, run.errors
    uids = set(ResourceSlice.objects.filter(cluster=cluster).values_list("uid", flat=True))
    assert uids == {o["metadata"]["uid"] for o in new if o["kind"] == "ResourceSlice"}
    assert not uids & old_uids
    # The devices were taken over in place: same rows (metrics, allocations keep their links).
    assert dict(Device.objects.filter(cluster=cluster).values_list("name", "pk")) == pks_before
    assert not Device.objects.filter(cluster=cluster, slice__uid__in=old_uids).exists()


def test_old_and_new_generation_listed_together_publish_each_device_once(tmp_path, synced, sync_snapshot):
    from inventory.models import Device, ResourceSlice, SyncStatus

    cluster, objs, pks_before = synced
    both = [*_recreated(objs), *objs]  # mid-restart: the old slices not yet deleted, read after
    run = sync_snapshot(write_list(tmp_path / "both.json", both), "pools")
    assert run.status == SyncStatus.OK, run.errors
    newest = {o["metadata"]["uid"] for o in both if o["kind"] == "ResourceSlice" and o["metadata"]["name"].endswith("-r2")}
    assert set(Device.objects.filter(cluster=cluster).values_list("slice__uid", flat=True)) <= newest
    assert dict(Device.objects.filter(cluster=cluster).values_list("name", "pk")) == pks_before
    assert ResourceSlice.objects.filter(cluster=cluster).count() == len(both)


def test_a_conflict_in_one_pool_does_not_block_deletions_elsewhere(tmp_path, synced, sync_snapshot):
    from inventory.models import DeviceClass, ResourceSlice, SyncStatus

    cluster, objs, _ = synced
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    gpu = next(o for o in slices if o["spec"]["driver"] == "gpu.nvidia.com")
    twin = copy.deepcopy(gpu)  # a second slice of the same pool and generation, same devices
    twin["metadata"]["name"] += "-twin"
    twin["metadata"]["uid"] = twin["metadata"]["uid"][:-4] + "twin"
    classes_before = DeviceClass.objects.filter(cluster=cluster).count()
    other_pool = next(o for o in slices if o["spec"]["pool"]["name"] != gpu["spec"]["pool"]["name"])
    kept = [o for o in objs if o is not other_pool]  # this slice vanished: it must be deleted
    run = sync_snapshot(write_list(tmp_path / "conflict.json", [*kept, twin]), "pools")
    assert run.status == SyncStatus.PARTIAL
    assert any("also published by another slice" in e or "published twice" in e for e in run.errors)
    assert not ResourceSlice.objects.filter(cluster=cluster, uid=other_pool["metadata"]["uid"]).exists()
    assert ResourceSlice.objects.filter(cluster=cluster, uid=gpu["metadata"]["uid"]).exists()
    assert DeviceClass.objects.filter(cluster=cluster).count() == classes_before


def _devices(cluster):
    from inventory.models import Device

    return sorted(Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "slice__uid", "uuid"))


@pytest.mark.parametrize("step", [-1, -2])
def test_a_pool_recreated_at_a_lower_generation_keeps_its_devices(tmp_path, synced, sync_snapshot, step):
    """The old slices gone and new ones of a lower generation (the driver's pool restarted
    its count): in the pool the scheduler now sees, the new slices are the newest; their
    devices are the pool's, not lost with the old slices' deletion."""
    from inventory.models import Device, SyncStatus

    cluster, objs, _ = synced
    keys_before = {d[:3] for d in _devices(cluster)}
    pks_before = {(dr, po, na): pk for dr, po, na, pk in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "pk")}
    new = _recreated(objs, "lo")
    for o in new:
        if o["kind"] == "ResourceSlice":
            o["spec"]["pool"]["generation"] += step - 1  # one below (or two below) the old one
    run = sync_snapshot(write_list(tmp_path / "lower.json", new), "pools")
    assert run.status == SyncStatus.OK, run.errors
    new_uids = {o["metadata"]["uid"] for o in new if o["kind"] == "ResourceSlice"}
    assert {d[3] for d in _devices(cluster)} == new_uids
    # Taken over in place: the same rows, so metrics and allocations keep their links.
    assert {(dr, po, na): pk for dr, po, na, pk in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "pk")} == pks_before

    # And back to the first objects: the same devices as a fresh cluster synced from them.
    run = sync_snapshot(write_list(tmp_path / "back.json", objs), "pools")
    assert run.status == SyncStatus.OK, run.errors
    run = sync_snapshot(write_list(tmp_path / "fresh.json", objs), "fresh-pools")
    from inventory.models import Cluster

    fresh = Cluster.objects.get(name="fresh-pools")
    assert _devices(cluster) == _devices(fresh)
    assert {d[:3] for d in _devices(cluster)} == keys_before


def test_a_partial_read_leaves_the_devices_with_the_slices_it_keeps(tmp_path, synced, sync_snapshot):
    """A read with errors deletes nothing: the old slices stay and so do their devices."""
    from inventory.models import SyncStatus

    cluster, objs, _ = synced
    before = _devices(cluster)
    new = _recreated(objs, "lo")
    for o in new:
        if o["kind"] == "ResourceSlice":
            o["spec"]["pool"]["generation"] -= 2
    (tmp_path / "read").mkdir()
    write_list(tmp_path / "read" / "a.json", new)
    (tmp_path / "read" / "b.yaml").write_text("kind: [unclosed\n")
    run = sync_snapshot(tmp_path / "read", "pools")
    assert run.status == SyncStatus.PARTIAL
    assert _devices(cluster) == before


def _lower(objs, suffix="lo"):
    new = _recreated(objs, suffix)
    for o in new:
        if o["kind"] == "ResourceSlice":
            o["spec"]["pool"]["generation"] -= 3
    return new


@pytest.mark.parametrize("first", ["listed-with-the-old", "in-a-partial-read"])
def test_new_slices_stored_before_the_old_ones_vanish_take_their_devices(tmp_path, synced, sync_snapshot, first):
    """Mid-restart the new (lower-generation) slices are listed beside the old ones, or come in
    a read with a problem: they are stored while the old ones still hold the devices. When a
    later complete read no longer has the old slices, the new ones (unchanged, so not read
    again) take the devices over, the same rows, instead of the pool being left empty."""
    from inventory.models import Device, SyncStatus

    cluster, objs, _ = synced
    pks_before = {(dr, po, na): pk for dr, po, na, pk in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "pk")}
    new = _lower(objs)
    new_slices = [o for o in new if o["kind"] == "ResourceSlice"]
    if first == "listed-with-the-old":
        run = sync_snapshot(write_list(tmp_path / "both.json", [*objs, *new_slices]), "pools")
        assert run.status == SyncStatus.OK, run.errors
    else:
        (tmp_path / "partial").mkdir()
        write_list(tmp_path / "partial" / "a.json", new)
        (tmp_path / "partial" / "b.yaml").write_text("kind: [unclosed\n")
        assert sync_snapshot(tmp_path / "partial", "pools").status == SyncStatus.PARTIAL
    assert {(dr, po, na): pk for dr, po, na, pk in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "pk")} == pks_before
    run = sync_snapshot(write_list(tmp_path / "new.json", new), "pools")
    assert run.status == SyncStatus.OK, run.errors
    assert {d[3] for d in _devices(cluster)} == {o["metadata"]["uid"] for o in new_slices}
    assert {(dr, po, na): pk for dr, po, na, pk in Device.objects.filter(cluster=cluster).values_list("driver", "pool", "name", "pk")} == pks_before
    again = sync_snapshot(write_list(tmp_path / "again.json", new), "pools")
    assert again.status == SyncStatus.OK and len(_devices(cluster)) == len(pks_before)


def test_a_device_only_an_older_generation_lists_is_not_counted_on_its_node(tmp_path, synced, sync_snapshot, client_in):
    """Mid-restart the driver lists one node's GPU pool again at a newer generation without
    one GPU, the old slice still there: the node's counts (overview cards, node list) are the
    newest generation's, as the scheduler and the per-pool aggregates read the pool."""
    from inventory.models import Node, SyncStatus

    cluster, objs, _ = synced
    gpu = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.nvidia.com")
    node = gpu["spec"]["nodeName"]
    before = Node.objects.get(cluster=cluster, name=node).gpu_count
    assert before == len(gpu["spec"]["devices"]) > 1
    new = _recreated([gpu])[0]
    new["spec"]["devices"] = new["spec"]["devices"][:-1]
    run = sync_snapshot(write_list(tmp_path / "mid.json", [*objs, new]), "pools")
    assert run.status == SyncStatus.OK, run.errors
    assert Node.objects.get(cluster=cluster, name=node).gpu_count == before - 1
    # Its page says so; a device of the newest generation's does not.
    from inventory.models import Device

    dropped = Device.objects.get(cluster=cluster, pool=gpu["spec"]["pool"]["name"], name=gpu["spec"]["devices"][-1]["name"])
    kept = Device.objects.get(cluster=cluster, pool=gpu["spec"]["pool"]["name"], name=gpu["spec"]["devices"][0]["name"])
    assert client_in.get(dropped.get_absolute_url()).context["superseded"]
    assert "older generation" in client_in.get(dropped.get_absolute_url()).content.decode()
    assert not client_in.get(kept.get_absolute_url()).context["superseded"]
    # The newer slice gone instead: the old one is the newest again and counts.
    run = sync_snapshot(write_list(tmp_path / "back.json", objs), "pools")
    assert run.status == SyncStatus.OK and Node.objects.get(cluster=cluster, name=node).gpu_count == before
    # The old slice gone: the newer one's count.
    run = sync_snapshot(write_list(tmp_path / "mid2.json", [*objs, new]), "pools")
    run = sync_snapshot(write_list(tmp_path / "new.json", [*(o for o in objs if o is not gpu), new]), "pools")
    assert run.status == SyncStatus.OK and Node.objects.get(cluster=cluster, name=node).gpu_count == before - 1
