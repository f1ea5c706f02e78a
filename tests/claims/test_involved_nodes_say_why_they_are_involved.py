"""An allocated_not_reserved finding involves the claim's node and every node that refuses its
pod: the runbook and claim pages say which is which (they were a bare list of nodes)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from store_helpers import CASES, cluster_name

from claims.models import Finding

pytestmark = pytest.mark.django_db
CASE = CASES / "allocated-not-reserved-pod-gone-unscheduled"
PINNED = "where the claim&#x27;s allocation pins the pod"
REFUSES = "refusing the pod: cordoned, or a taint it does not tolerate"


def _after_link(body: str, node: str) -> str:
    """The text after the link to ``node`` up to the end of its line of the involved list."""
    m = re.search(rf">Node {node}</a>(.*?)</div>", body)
    assert m, node
    return m.group(1)


def test_the_runbook_and_claim_pages_say_why_each_node_is_involved(client_in, sync_snapshot):
    sync_snapshot(CASE / "snapshot", name=cluster_name(CASE))
    f = Finding.objects.open().select_related("claim__cluster").get(category="allocated_not_reserved")
    assert [o["name"] for o in f.involved if o["kind"] == "Node"] == ["gpu-node-01", "gpu-node-02"]
    assert "1 other node(s) refuse the pod" in f.summary
    # The runbook names each role once, above its nodes; gpu-node-01 is cordoned, but the pod can only go there.
    body = client_in.get(f"{f.get_runbook_url()}?finding={f.pk}").content.decode()
    link = r'<div class="mono"><a href="[^"]+">Node {}</a></div>'
    assert re.search(rf"Node {PINNED}:</div>{link.format('gpu-node-01')}"
                     rf'<div class="small muted role">Node {REFUSES}:</div>{link.format("gpu-node-02")}', body)
    # The claim page's findings say it on each line.
    c = f.claim
    body = client_in.get(reverse("claims:claim", args=[c.cluster.name, c.namespace, c.name])).content.decode()
    assert PINNED in _after_link(body, "gpu-node-01")
    assert REFUSES in _after_link(body, "gpu-node-02")


def test_the_stuck_queue_does_not_load_the_evidence_for_the_roles(client_in, sync_snapshot, django_assert_max_num_queries):
    sync_snapshot(CASE / "snapshot", name=cluster_name(CASE))
    client_in.get(reverse("claims:stuck"))
    with django_assert_max_num_queries(20) as ctx:
        body = client_in.get(reverse("claims:stuck")).content.decode()
    assert "gpu-node-02" in body and REFUSES not in body
    assert not any('"evidence"' in q["sql"] for q in ctx.captured_queries)
