"""The heatmap shows 100 nodes a page with a fixed number of queries, even for 5,000 nodes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Cluster, Device, DeviceType, Node, ResourceSlice
from tests.telemetry.pagedata import PAGE_CHROME

pytestmark = pytest.mark.django_db


@pytest.fixture
def big():
    c = Cluster.objects.create(name="big")
    s = ResourceSlice.objects.create(cluster=c, uid="s", name="s", driver="gpu.nvidia.com", pool="p")
    Node.objects.bulk_create([Node(cluster=c, uid=f"n{i}", name=f"node-{i:04d}") for i in range(5000)], batch_size=1000)
    devs = [
        Device(cluster=c, slice=s, driver="gpu.nvidia.com", pool=f"node-{i:04d}", name=f"gpu-{g}", node_name=f"node-{i:04d}",
               type=DeviceType.GPU, uuid=f"GPU-{i:04d}-{g}", metrics={"DCGM_FI_DEV_GPU_UTIL": float((i + g) % 101)})
        for i in range(5000) for g in range(2)
    ]  # fmt: skip
    Device.objects.bulk_create(devs, batch_size=2000)
    return c


@pytest.mark.parametrize("page", [1, 27, 50])
def test_each_page_holds_100_nodes_with_their_gpus(client_in, big, page, django_assert_max_num_queries):
    with django_assert_max_num_queries(4 + PAGE_CHROME):
        html = client_in.get(reverse("inventory:telemetry-heatmap", args=["big"]), {"page": page}).content.decode()
    first = (page - 1) * 100
    assert f">node-{first:04d}</a>" in html and f">node-{first + 99:04d}</a>" in html
    assert f">node-{first + 100:04d}</a>" not in html
    assert html.count('class="heat"') == 200
    assert "of 5000" in html and f"page {page} of 50" in html
