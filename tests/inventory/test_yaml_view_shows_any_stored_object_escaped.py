"""The YAML view of a stored object is its raw JSON as YAML, escaped: hostile cluster text
(an annotation holding markup) shows as text, never as HTML."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from inventory.models import KubeObject, Node, Pod, ResourceClaim
from tests.conftest import CASES, write_list

pytestmark = pytest.mark.django_db
MIG_CASE = CASES / "constraint-unsatisfiable-parentuuid/snapshot/cluster.yaml"


def test_every_kind_has_a_yaml_view_that_round_trips(client_in, sync_snapshot):
    sync_snapshot(MIG_CASE, name="mig", hooks=False)
    objects = [("node", Node.objects.first()), ("resourceclaim", ResourceClaim.objects.first()), ("pod", Pod.objects.first()),
               ("object", KubeObject.objects.filter(kind="ResourceClaimTemplate").first())]
    for model, obj in objects:
        resp = client_in.get(reverse("inventory:yaml", args=[model, obj.pk]))
        assert resp.status_code == 200, model
        assert yaml.safe_load(resp.context["text"]) == obj.raw


def test_hostile_text_in_an_object_is_escaped(client_in, sync_snapshot, tmp_path):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "gpu-x", "uid": "u-x", "annotations": {"note": "<script>alert(1)</script>"}},
            "status": {"conditions": [{"type": "Ready", "status": "True", "message": "<img src=x onerror=alert(2)>"}]}}
    sync_snapshot(write_list(tmp_path / "n.json", [node]), name="hostile", hooks=False)
    pk = Node.objects.get(name="gpu-x").pk
    body = client_in.get(reverse("inventory:yaml", args=["node", pk])).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    page = client_in.get(reverse("inventory:node", args=["hostile", "gpu-x"])).content.decode()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page
