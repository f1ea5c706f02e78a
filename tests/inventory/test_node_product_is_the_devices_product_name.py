"""A node's GPU product is the productName its GPU devices publish, as device pages and the
overview show it, so filtering the node list by that name finds the node; the GPU Operator's
``nvidia.com/gpu.product`` label (dashes for spaces) is only the fallback."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Device, Node

pytestmark = pytest.mark.django_db


def test_the_node_list_filters_by_the_name_device_pages_show(client_in, demo_clusters):
    labelled = [n for n in Node.objects.filter(gpu_count__gt=0) if (n.raw.get("metadata") or {}).get("labels", {}).get("nvidia.com/gpu.product")]
    assert labelled, "the demo has GPU nodes with the GPU Operator's product label"
    for node in labelled:
        product = Device.objects.filter(cluster=node.cluster, node_name=node.name, driver="gpu.nvidia.com").exclude(product_name="").values_list("product_name", flat=True).first()
        assert node.gpu_product == product
    node = labelled[0]
    page = client_in.get(reverse("inventory:nodes") + f"?cluster={node.cluster.name}&product={node.gpu_product}").content.decode()
    assert node.name in page
