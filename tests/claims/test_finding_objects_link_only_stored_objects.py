"""Findings name objects that may not exist (the claim of ``claim_not_found``, a pod that is
gone): pages link only the stored ones, every link opens a page, the others read "not stored"."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from store_helpers import CASES, cluster_name

from claims.links import attach_object_links
from claims.models import Finding
from inventory.models import Node, Pod, ResourceClaim

pytestmark = pytest.mark.django_db
CASE_NAMES = ["claim-not-found-pod-references-missing-claim", "orphan-claim-reserved-for-deleted-pod",
              "allocated-not-reserved-pod-gone-unscheduled"]
LINK = re.compile(r'href="(/(?:claims|inventory)/[^"?#]+)"')


@pytest.fixture
def synced(sync_snapshot):
    for name in CASE_NAMES:
        sync_snapshot(CASES / name / "snapshot", name=cluster_name(CASES / name))


def _is_stored(cluster, kind: str, namespace: str, name: str) -> bool:
    if kind == "ResourceClaim":
        return ResourceClaim.objects.filter(cluster=cluster, namespace=namespace, name=name).exists()
    if kind == "Pod":
        return Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).exists()
    return Node.objects.filter(cluster=cluster, name=name).exists()


def _missing_refs(findings):
    return [(f, o) for f in findings for o in f.involved
            if o.get("kind") in {"ResourceClaim", "Pod", "Node"} and not _is_stored(f.cluster, o["kind"], o.get("namespace") or "", o["name"])]


def _links_open(client, body: str) -> None:
    links = set(LINK.findall(body))
    assert links
    for url in links:
        assert client.get(url).status_code == 200, url


def test_the_cases_have_findings_naming_objects_that_are_not_stored(synced):
    findings = list(Finding.objects.open().select_related("cluster"))
    missing = _missing_refs(findings)
    assert {f.category for f, _ in missing} >= {"claim_not_found"}
    assert any(o["kind"] == "Pod" for _, o in missing)


def test_every_link_on_the_stuck_queue_opens_a_page_and_absent_objects_say_not_stored(client_in, synced):
    body = client_in.get(reverse("claims:stuck")).content.decode()
    _links_open(client_in, body)
    missing = _missing_refs(Finding.objects.open().select_related("cluster"))
    for f, o in missing:
        gone = reverse("claims:claim" if o["kind"] == "ResourceClaim" else "claims:pod",
                       args=[f.cluster.name, o["namespace"], o["name"]]) if o["kind"] != "Node" else None
        if gone:
            assert f'href="{gone}"' not in body
        assert f'{o.get("namespace")}/{o["name"]}' in body or o["name"] in body
    assert body.count(">not stored</span>") >= len({(f.cluster_id, o["kind"], o.get("namespace"), o["name"]) for f, o in missing})


def test_the_runbook_of_a_finding_links_only_stored_objects(client_in, synced):
    f, _ = _missing_refs(Finding.objects.open().select_related("cluster"))[0]
    body = client_in.get(f"{f.get_runbook_url()}?finding={f.pk}").content.decode()
    assert "not stored" in body
    for url in set(LINK.findall(body)):
        assert client_in.get(url).status_code == 200, url


def test_the_claim_page_findings_link_only_stored_objects(client_in, synced):
    claims = [f.claim for f in Finding.objects.open().filter(claim__isnull=False).select_related("claim__cluster")]
    assert claims
    for c in claims:
        body = client_in.get(reverse("claims:claim", args=[c.cluster.name, c.namespace, c.name])).content.decode()
        _links_open(client_in, body)


def test_links_of_all_findings_of_a_page_are_checked_in_one_query(synced, django_assert_num_queries):
    findings = list(Finding.objects.open().select_related("cluster"))
    kinds = {o["kind"] for f in findings for o in f.involved if o.get("kind") in {"ResourceClaim", "Pod", "Node"}}
    assert len(kinds) >= 2
    with django_assert_num_queries(1):
        attach_object_links(findings)
    assert all(len(f.links) == len(f.involved) for f in findings)
    assert any(link.missing for f in findings for link in f.links)
