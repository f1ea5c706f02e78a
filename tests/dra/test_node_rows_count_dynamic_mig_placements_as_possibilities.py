"""The Node rows the node list, the clusters index and the API read agree with the overview
on a dynamic-MIG node: its free devices are what can be allocated now (held counters,
NoSchedule/NoExecute taints), its MIG instances the held placements, not every placement the
driver publishes."""

from __future__ import annotations

import pytest

from inventory import queries
from inventory.models import Cluster, Device, Node
from tests.dra import shapes
from tests.dra.test_inventory_json_adds_allocatable_now_taints_health_and_sharers import _objects

pytestmark = pytest.mark.django_db


def test_node_rows_of_a_dynamic_mig_node_count_what_can_be_allocated(tmp_path):
    shapes.sync(_objects(), tmp_path / "s.json", "dra")
    cluster = Cluster.objects.get(name="dra")
    states = queries.dra_states(cluster, health=False)
    counter_nodes = {n for n, st in states.items()
                     if any(s.device.consumes_counters for s in st.devices.values())}
    assert counter_nodes
    for node in Node.objects.filter(cluster=cluster, name__in=counter_nodes):
        placements = Device.objects.filter(cluster=cluster, node_name=node.name, type="mig").count()
        st = states[node.name]
        assert (node.free_count, node.mig_count) == (st.free_count(), len(st.instances()))
        assert node.mig_count < placements  # unheld placements are possibilities, not instances
    [row] = queries.with_dra_counts([r for r in queries.cluster_rows() if r["cluster"] == cluster])
    nodes = Node.objects.filter(cluster=cluster, name__in=counter_nodes)
    assert sum(n.mig_count for n in nodes) == row["migs"]


def test_free_whole_gpus_of_a_dynamic_mig_node_leave_out_tainted_and_carved_ones(tmp_path):
    """The "Free whole GPUs" filter reads ``free_gpu_count``: on a dynamic-MIG node a GPU with
    a placement held, or whose whole-GPU device a NoSchedule/NoExecute taint keeps off, is not
    a free GPU, as the node page's allocatable state says."""
    from inventory.filters import NodeFilter

    shapes.sync(_objects(), tmp_path / "s.json", "dra")
    cluster = Cluster.objects.get(name="dra")
    states = queries.dra_states(cluster, health=False)
    checked = 0
    for node in Node.objects.filter(cluster=cluster):
        st = states.get(node.name)
        if st is None or not any(s.device.consumes_counters for s in st.devices.values()):
            continue
        whole = [s for s in st.devices.values() if s.device.type == "gpu" and not s.device.parent_uuid]
        held_parents = {s.device.parent_uuid for s in st.devices.values() if s.sharers}
        tainted = [s for s in whole if any(t.effect in ("NoSchedule", "NoExecute") for t in s.taints)]
        carved = [s for s in whole if s.device.uuid in held_parents]
        assert node.free_gpu_count == len([s for s in whole if s not in tainted and s not in carved and s.allocatable])
        assert node.free_gpu_count < len(whole)
        kept = {n.name for n in NodeFilter({"cluster": "dra", "min_free": str(node.free_gpu_count + 1)},
                                           queryset=Node.objects.all()).qs}
        assert node.name not in kept
        checked += 1
    assert checked
