"""The overview of a dynamic-MIG node: 4 physical GPUs (a placement's parentUUID is a published
GPU, not another one), MIG instances are the held placements, free per profile is what can
still be allocated, and free devices leave out tainted and counter-starved GPUs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory import queries
from inventory.models import Cluster
from tests.dra import shapes
from tests.dra.test_inventory_json_adds_allocatable_now_taints_health_and_sharers import _objects

pytestmark = pytest.mark.django_db


def test_the_overview_of_a_dynamic_mig_node(tmp_path, client_in):
    shapes.sync(_objects(), tmp_path / "s.json", "dra")
    cluster = Cluster.objects.get(name="dra")
    [h200] = [p for p in queries.gpus_by_product(cluster) if p["product"] == shapes.H200]
    assert (h200["total"], h200["whole"], h200["mig_parents"]) == (4, 4, 0)
    assert (h200["mig_instances"], h200["mig_allocated"]) == (2, 2)
    profiles = {p["profile"]: p for p in queries.mig_by_profile(cluster) if p["product_name"] == shapes.H200}
    assert (profiles["1g.18gb"]["total"], profiles["1g.18gb"]["free"]) == (0, 16)
    assert (profiles["1g.18gb+me"]["total"], profiles["1g.18gb+me"]["allocated"], profiles["1g.18gb+me"]["free"]) == (1, 1, 2)
    [row] = queries.with_dra_counts([r for r in queries.cluster_rows() if r["cluster"] == cluster])
    # Free gpu.nvidia.com devices: none. GPU 0 has a placement held (its counters are taken),
    # GPU 1 is held, GPU 2 has an XID NoSchedule taint, GPU 3 is drained (NoExecute rule); the
    # 98 unheld placements are possibilities, not free devices.
    assert row["free"] == 0
    assert row["migs"] == 2
    page = client_in.get(reverse("inventory:cluster", args=["dra"]))
    assert page.status_code == 200
    # No free device, yet placements fit: the card points at the MIG table instead of reading as "nothing".
    assert page.context["dynamic_mig_free"] == sum(p["free"] for p in profiles.values() if p.get("placements")) > 0
    assert "MIG placements still fit on partly used GPUs" in page.content.decode()


def test_a_cordoned_dynamic_mig_node_offers_no_placement_on_the_overview(tmp_path, client_in):
    """The same node with its Node object, Ready, then cordoned: what its GPUs' counters leave
    is free to no pod, so the MIG table's free column and the Free devices card's note leave
    it out."""
    from tests.dra.test_inventory_json_adds_allocatable_now_taints_health_and_sharers import NODE

    def node(cordoned):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "uid": "uid-node", "resourceVersion": str(int(cordoned) + 1)},
                "spec": {"unschedulable": cordoned}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}

    shapes.sync([*_objects(), node(False)], tmp_path / "s.json", "dra")
    cluster = Cluster.objects.get(name="dra")
    before = {p["profile"]: p["free"] for p in queries.mig_by_profile(cluster) if p.get("placements")}
    assert sum(before.values()) > 0
    shapes.sync([*_objects(), node(True)], tmp_path / "s2.json", "dra")
    after = {p["profile"]: p["free"] for p in queries.mig_by_profile(cluster) if p.get("placements")}
    assert set(after) == set(before) and sum(after.values()) == 0
    page = client_in.get(reverse("inventory:cluster", args=["dra"]))
    assert page.context["dynamic_mig_free"] == 0
    assert "MIG placements still fit" not in page.content.decode()
