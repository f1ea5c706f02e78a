"""The header search finds nodes by name: a whole name opens the node page, a partial one lists
the nodes with their cluster and a link to the filtered node list."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Node

pytestmark = pytest.mark.django_db


def test_a_whole_node_name_opens_the_node_page(client_in, demo_clusters):
    names = list(Node.objects.values_list("name", flat=True))
    node = next(n for n in Node.objects.select_related("cluster").order_by("-pk") if sum(n.name in m for m in names) == 1)
    resp = client_in.get(reverse("inventory:search"), {"q": node.name})
    assert resp.status_code == 302 and resp["Location"] == node.get_absolute_url()


def test_a_name_prefix_lists_the_nodes_with_their_cluster(client_in, demo_clusters):
    nodes = list(Node.objects.select_related("cluster"))
    prefix = max({n.name.rsplit("-", 1)[0] for n in nodes}, key=lambda p: sum(n.name.startswith(p) for n in nodes))
    want = sorted((n.cluster.name, n.name) for n in nodes if prefix in n.name)
    assert len(want) > 1
    resp = client_in.get(reverse("inventory:search"), {"q": prefix})
    assert resp.status_code == 200
    group = next(g for g in resp.context["result"].groups if g.kind == "node")
    assert sorted((n.cluster.name, n.name) for n in group.objects) == want
    html = resp.content.decode()
    for cluster, name in want:
        assert f'href="{reverse("inventory:node", args=[cluster, name])}"' in html
    assert group.see_all == reverse("inventory:nodes") + "?q=" + prefix
