"""The header search finds a cluster by its name and nodes by their GPU product, as the node
list's own search does (``/search/?q=a100`` said "Nothing matches" beside the cluster vks-a100
and its nodes' GRID A100-10C GPUs)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Node

pytestmark = pytest.mark.django_db


def test_a100_finds_the_cluster_and_its_nodes(client_in, demo_clusters):
    resp = client_in.get(reverse("inventory:search"), {"q": "a100"})
    assert resp.status_code == 200
    groups = {g.kind: g for g in resp.context["result"].groups}
    assert [c.name for c in groups["cluster"].objects] == ["vks-a100"]
    nodes = set(Node.objects.filter(gpu_product__icontains="A100").values_list("name", flat=True))
    assert nodes and {n.name for n in groups["node"].objects} == nodes
    html = resp.content.decode()
    assert f'href="{reverse("inventory:cluster", args=["vks-a100"])}"' in html and "GRID A100-10C" in html
    # "See all" lists at least these: the node list's own search matches the product too.
    node_list = client_in.get(groups["node"].see_all).content.decode()
    assert all(n in node_list for n in nodes)


def test_a_whole_cluster_name_alone_opens_the_cluster_page(client_in, demo_clusters):
    resp = client_in.get(reverse("inventory:search"), {"q": "aicr-h100"})
    assert resp.status_code == 302 and resp["Location"] == reverse("inventory:cluster", args=["aicr-h100"])
