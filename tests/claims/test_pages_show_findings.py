"""Claims list, claim page, node, device and overview pages show the stored findings with
bounded queries; every claims page needs a login."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name, expected_category

from claims.models import Finding
from inventory.models import Device, Node

pytestmark = pytest.mark.django_db


def _case(category):
    return next(c for c in CASE_DIRS if expected_category(c) == category)


@pytest.fixture
def stuck_claim(sync_snapshot):
    case = _case("claim_stuck_deallocating")
    sync_snapshot(case / "snapshot", name=cluster_name(case))
    return Finding.objects.filter(category="claim_stuck_deallocating", claim__isnull=False).order_by("pk").first()


def test_every_claims_page_needs_login(client, stuck_claim):
    urls = [reverse("claims:stuck"), reverse("claims:list"), stuck_claim.claim.get_absolute_url(),
            reverse("claims:runbook", args=["capacity_exhausted"])]
    for url in urls:
        resp = client.get(url)
        assert resp.status_code == 302 and resp["Location"].startswith(reverse("login")), url


def test_claim_list_has_a_findings_column_in_bounded_queries(client_in, sync_snapshot, django_assert_max_num_queries):
    sync_snapshot(_case("claim_stuck_deallocating") / "snapshot", name="a")
    with CaptureQueriesContext(connection) as small:
        client_in.get(reverse("claims:list"))
    for case in CASE_DIRS[:8]:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    with django_assert_max_num_queries(len(small.captured_queries)):
        resp = client_in.get(reverse("claims:list"))
    body = resp.content.decode()
    assert "title=\"sort by findings\">Findings" in body and "claim_stuck_deallocating" in body
    with_findings = [c for c in resp.context["claims"] if c.open_findings]
    assert with_findings and all(f.claim_id == c.pk for c in with_findings for f in c.open_findings)


def test_claim_page_shows_findings_runbook_events_and_history(client_in, stuck_claim, django_assert_max_num_queries):
    with django_assert_max_num_queries(16):  # + the snapshot clock all ages use, + the stored DeviceClass names
        resp = client_in.get(stuck_claim.claim.get_absolute_url())
    body = resp.content.decode()
    assert stuck_claim.summary in body
    assert reverse("claims:runbook", args=["claim_stuck_deallocating"]) in body
    assert "claim_stuck_deallocating</a> appeared" in body.replace("<wbr>", "")  # breaks at underscores
    assert stuck_claim in resp.context["open_findings"]


def test_claim_page_lists_events_of_both_shapes(client_in, sync_snapshot):
    for case in CASE_DIRS:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    from inventory.models import KubeObject

    shown = 0
    for f in Finding.objects.filter(claim__isnull=False).select_related("claim", "claim__cluster"):
        resp = client_in.get(f.claim.get_absolute_url())
        assert resp.status_code == 200
        for e in resp.context["events"]:
            assert e.reason and e.count >= 1
            shown += 1
    stored = KubeObject.objects.filter(kind="Event").count()
    assert stored == 0 or shown > 0


def test_node_page_shows_the_findings_of_the_node(client_in, sync_snapshot, django_assert_max_num_queries):
    sync_snapshot(_case("driver_publishing_empty_pool") / "snapshot", name="empty")
    f = Finding.objects.filter(category="driver_publishing_empty_pool").first()
    node = Node.objects.get(name=f.node_name)
    with django_assert_max_num_queries(16):
        body = client_in.get(node.get_absolute_url()).content.decode()
    assert "Findings on this node" in body and "driver_publishing_empty_pool" in body


def test_device_page_shows_the_findings_of_claims_holding_it(client_in, stuck_claim, django_assert_max_num_queries):
    device = Device.objects.filter(allocations__claim=stuck_claim.claim).first()
    assert device is not None
    with django_assert_max_num_queries(16):
        body = client_in.get(device.get_absolute_url()).content.decode()
    assert "Findings about this device" in body and "claim_stuck_deallocating" in body


def test_overview_counts_open_findings_by_category(client_in, stuck_claim, django_assert_max_num_queries):
    with django_assert_max_num_queries(16):
        body = client_in.get(reverse("inventory:cluster", args=[stuck_claim.cluster.name])).content.decode()
    assert "Open findings by category" in body
    assert f"?category=claim_stuck_deallocating&amp;cluster={stuck_claim.cluster.name}" in body
