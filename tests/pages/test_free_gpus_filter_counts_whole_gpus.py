"""The node list's "Free whole GPUs >=" counts physical GPUs with nothing allocated on them:
a free 1g MIG instance is not a free H200, and a GPU with one instance held is not free."""

from __future__ import annotations

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.filters import NodeFilter
from inventory.models import AllocationResult, Device, Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(tmp_path):
    call_command("load_demo", "--out-dir", str(tmp_path), "--no-user", stdout=StringIO())


def _free_whole_gpus_by_hand() -> Counter:
    """(cluster, node) -> GPUs published whole with no allocation on them or their instances."""
    held = set(AllocationResult.objects.filter(device__isnull=False).values_list("device_id", flat=True))
    devices = list(Device.objects.values("pk", "cluster_id", "node_name", "type", "uuid", "parent_uuid"))
    busy_parents = {(d["cluster_id"], d["parent_uuid"]) for d in devices if d["parent_uuid"] and d["pk"] in held}
    out: Counter = Counter()
    for d in devices:
        if d["type"] == "gpu" and not d["parent_uuid"] and d["pk"] not in held and (d["cluster_id"], d["uuid"]) not in busy_parents:
            out[(d["cluster_id"], d["node_name"])] += 1
    return out


def _placeable() -> set[tuple[int, str]]:
    """Nodes a pod being scheduled can land on: Ready and not cordoned (or status unknown)."""
    return {(n.cluster_id, n.name) for n in Node.objects.all() if n.from_slices or (n.ready and not n.unschedulable)}


def _nodes(params):
    f = NodeFilter(params, queryset=Node.objects.all())
    assert f.is_valid()
    return {(n.cluster_id, n.name) for n in f.qs}


@pytest.mark.parametrize("at_least", [1, 2, 4, 8])
def test_the_filter_keeps_the_nodes_with_that_many_free_whole_gpus(demo, at_least):
    want = {k for k, n in _free_whole_gpus_by_hand().items() if n >= at_least} & _placeable()
    assert _nodes({"min_free": str(at_least)}) == want


def test_a_cordoned_node_with_idle_gpus_offers_none(client_in, demo):
    """The demo's cordoned H200 node has idle whole GPUs: none is free to a pod being
    scheduled, so the filter leaves it out, the overview's free card does not count them and
    its page says why."""
    free = _free_whole_gpus_by_hand()
    cordoned = [n for n in Node.objects.filter(unschedulable=True, from_slices=False) if free[(n.cluster_id, n.name)]]
    assert cordoned, "the demo has a cordoned node with idle GPUs"
    n = cordoned[0]
    assert (n.cluster_id, n.name) not in _nodes({"min_free": "1"})
    assert (n.cluster_id, n.name) in _nodes({"min_free": "0"}) | _nodes({})
    body = client_in.get(reverse("inventory:node", args=[n.cluster.name, n.name])).content.decode()
    assert "idle, but the node is cordoned" in body and "until the node is uncordoned" in body
    from inventory import queries

    row = next(r for r in queries.with_dra_counts(queries.cluster_rows()) if r["cluster"] == n.cluster)
    summary = queries.cluster_dra_summary(n.cluster)
    placeable = [m for m in Node.objects.filter(cluster=n.cluster) if m.from_slices or (m.ready and not m.unschedulable)]
    assert row["free"] == sum(summary["free"].get(m.name, m.free_count) for m in placeable)


def test_a_node_whose_free_devices_are_only_mig_instances_has_no_free_gpu(demo):
    free = _free_whole_gpus_by_hand()
    only_slices = [n for n in Node.objects.filter(free_count__gt=0) if free[(n.cluster_id, n.name)] == 0]
    assert only_slices, "the demo has a node in MIG mode with free instances"
    kept = _nodes({"min_free": "1"})
    assert not {(n.cluster_id, n.name) for n in only_slices} & kept


def test_the_node_list_page_applies_it(client_in, demo):
    html = client_in.get(reverse("inventory:nodes"), {"min_free": "4"}).content.decode()
    free = _free_whole_gpus_by_hand()
    placeable = _placeable()
    for n in Node.objects.all():
        link = reverse("inventory:node", args=[n.cluster.name, n.name])
        assert (f'href="{link}"' in html) == (free[(n.cluster_id, n.name)] >= 4 and (n.cluster_id, n.name) in placeable), n.name
    assert "Free whole GPUs" in html


def test_the_count_follows_an_allocation_made_after_the_first_sync(tmp_path, sync_snapshot):
    """The filter reads the count each sync keeps (``Node.free_gpu_count``): a later sync in
    which the real VKS claim holds ``gpu-0`` of its node takes that GPU out of it."""
    from inventory.snapshot import load_path
    from tests.conftest import VKS_CLAIM, VKS_SLICES, write_list

    slices = load_path(VKS_SLICES).objects
    claim = load_path(VKS_CLAIM).objects
    node = claim[0]["status"]["allocation"]["devices"]["results"][0]["pool"]
    sync_snapshot(write_list(tmp_path / "before.json", slices), "vks-free")
    before = Node.objects.get(cluster__name="vks-free", name=node).free_gpu_count
    assert before >= 1
    sync_snapshot(write_list(tmp_path / "after.json", [*slices, *claim]), "vks-free")
    assert Node.objects.get(cluster__name="vks-free", name=node).free_gpu_count == before - 1
    assert node in {n.name for n in NodeFilter({"cluster": "vks-free", "min_free": str(before - 1)}, queryset=Node.objects.all()).qs}
    assert node not in {n.name for n in NodeFilter({"cluster": "vks-free", "min_free": str(before)}, queryset=Node.objects.all()).qs}
