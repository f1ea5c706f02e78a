"""A node whose DRA driver is down still reports Ready to Kubernetes; the overview lists the
nodes with open findings about the node itself (no claim), most severe first."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from claims.models import Finding

pytestmark = pytest.mark.django_db


def test_nodes_with_node_findings_are_listed_on_the_overview(client_in):
    call_command("load_demo", "--no-user")
    about_nodes = [
        f for f in Finding.objects.open().exclude(severity="info")
        if f.node_name and f.involved and f.involved[0]["kind"] in ("Node", "ResourceSlice")
    ]
    assert about_nodes, "the demo has driver findings about nodes"
    html = client_in.get(reverse("inventory:overview")).content.decode()
    assert "Nodes with open findings" in html
    for f in about_nodes:
        assert reverse("inventory:node", args=[f.cluster.name, f.node_name]) in html
    # A claim's finding on a node (the claim is its main object) does not list the node.
    claim_only = {f.node_name for f in Finding.objects.open().exclude(node_name="") if f.involved[0]["kind"] == "ResourceClaim"}
    claim_only -= {f.node_name for f in about_nodes}
    assert claim_only
    section = html[html.index("Nodes with open findings"):]
    for name in claim_only:
        assert f">{name}</a>" not in section
