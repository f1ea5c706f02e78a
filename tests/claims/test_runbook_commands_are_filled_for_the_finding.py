"""A runbook opened for a finding (``?finding=<id>``) has its command placeholders filled with
that finding's objects (namespace, claim, pod, node); names that are not valid Kubernetes names
are never put into a command, and the runbook without a finding keeps its placeholders."""

from __future__ import annotations

import pytest
from django.urls import reverse
from store_helpers import CASE_DIRS, cluster_name

from claims.models import Finding
from claims.runbooks import fill_placeholders, placeholder_values

pytestmark = pytest.mark.django_db


def test_the_runbook_of_each_claim_finding_names_its_claim(client_in, sync_snapshot):
    for case in CASE_DIRS:
        sync_snapshot(case / "snapshot", name=cluster_name(case))
    checked = 0
    for f in Finding.objects.open():
        claim = next((o for o in f.involved if o["kind"] == "ResourceClaim"), None)
        url = reverse("claims:runbook", args=[f.category])
        plain = client_in.get(url).content.decode()
        filled = client_in.get(f"{url}?finding={f.pk}").content.decode()
        if claim and "&lt;claim&gt;" in plain:
            panel = filled.split('class="panel runbook"', 1)[1]
            assert claim["name"] in panel and "&lt;claim&gt;" not in panel
            assert f"-n {claim['namespace']}" in panel and "&lt;ns&gt;" not in panel
            checked += 1
    assert checked > 0


def test_values_come_from_the_involved_objects_and_only_valid_names_are_used():
    involved = [
        {"kind": "ResourceClaim", "namespace": "team-a", "name": "llm-gpu-x"},
        {"kind": "Pod", "namespace": "team-a", "name": "llm-0"},
        {"kind": "Node", "namespace": None, "name": "gpu-1; rm -rf /"},
    ]
    values = placeholder_values(involved, node_name="")
    assert values == {"claim": "llm-gpu-x", "pod": "llm-0", "ns": "team-a"}
    assert fill_placeholders("kubectl get resourceclaim -n <ns> <claim> on <node>", values) == (
        "kubectl get resourceclaim -n team-a llm-gpu-x on <node>"
    )
    assert placeholder_values([], node_name="gpu-h200-05") == {"node": "gpu-h200-05"}
