"""A node no Node object was read for (only its ResourceSlices name it) is not shown as Ready
with no taints: its status, labels and taints are unknown, on the node page, the node list and
the overview."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Device, Node
from tests.conftest import H100_SLICES

pytestmark = pytest.mark.django_db


def test_slice_only_nodes_say_their_status_is_unknown(client_in, sync_snapshot):
    sync_snapshot(H100_SLICES, name="aicr", hooks=False)  # ResourceSlices only, no Node objects
    node = Node.objects.get(cluster__name="aicr", name="gpu-node-2")
    assert node.from_slices
    # Its product comes from the devices its slices publish.
    assert node.gpu_product and node.gpu_product == Device.objects.filter(cluster=node.cluster, node_name=node.name, driver="gpu.nvidia.com").values_list("product_name", flat=True).first()
    page = client_in.get(node.get_absolute_url()).content.decode()
    assert "status unknown" in page and "No taints." not in page and 'badge green">Ready' not in page
    listing = client_in.get(reverse("inventory:nodes") + "?cluster=aicr").content.decode()
    assert ">unknown</span>" in listing and 'badge green">Ready' not in listing
    overview = client_in.get(reverse("inventory:cluster", args=["aicr"])).content.decode()
    assert "known only from ResourceSlices" in overview and "Every node is Ready" not in overview
