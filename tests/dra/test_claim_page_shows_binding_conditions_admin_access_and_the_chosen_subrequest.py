"""The claim page says whether a claim waits on binding conditions, is an admin-access claim,
and which firstAvailable alternative its allocation chose."""

from __future__ import annotations

import copy
import re

import pytest
from django.urls import reverse

from inventory import queries
from tests.dra import shapes

POOL = "dra-example-driver-cluster-worker"


def _bound(status: str | None):
    tmpl = next(o for o in shapes.example("binding-conditions__binding-conditions.yaml") if o["kind"] == "ResourceClaimTemplate")
    claim = shapes.allocate(tmpl, [], name="pod0-gpu", namespace="binding-conditions")
    claim["status"] = copy.deepcopy(shapes.fragment("dra-example-driver-binding-conditions-status-fragment.v1.yaml")["status"])
    if status is None:
        del claim["status"]["devices"]
    else:
        claim["status"]["devices"][0]["conditions"][0]["status"] = status
    return claim


def test_a_claim_whose_binding_condition_is_not_yet_true_is_waiting():
    [b] = queries.claim_dra(_bound("False"))["binding"]
    assert b["waiting"] and not b["failed"] and b["conditions"] == [("BindingConditions", "False")]
    [b] = queries.claim_dra(_bound(None))["binding"]
    assert b["waiting"] and b["conditions"] == [("BindingConditions", "not reported")]
    [b] = queries.claim_dra(_bound("True"))["binding"]
    assert not b["waiting"]


def test_the_chosen_alternative_and_those_passed_over():
    tmpl = next(o for o in shapes.example("prioritized-alternatives__prioritized-alternatives.yaml") if o["kind"] == "ResourceClaimTemplate")
    claim = shapes.allocate(tmpl, [shapes.result("gpu/older-gpu", "gpu-1", POOL, driver="gpu.example.com")])
    [p] = queries.claim_dra(claim)["prioritized"]
    assert p["chosen"] == "older-gpu" and p["passed_over"] == ["bleeding-edge-gpu", "huge-gpu"]


@pytest.mark.django_db
def test_the_claim_page_shows_them(tmp_path, client_in):
    admin_tmpl = next(o for o in shapes.example("admin-access__admin-access.yaml") if o["kind"] == "ResourceClaimTemplate")
    admin = shapes.allocate(admin_tmpl, [shapes.result("admin-gpu", "gpu-0", POOL, driver="gpu.example.com", adminAccess=True)],
                            name="monitor")  # fmt: skip
    shapes.sync([_bound("False"), admin], tmp_path / "s.json", "dra")
    page = client_in.get(reverse("claims:claim", args=["dra", "binding-conditions", "pod0-gpu"])).content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "BindingConditions=False" in text and "waiting" in text
    ns = admin["metadata"]["namespace"]
    page = client_in.get(reverse("claims:claim", args=["dra", ns, "monitor"])).content.decode()
    assert "admin access" in page


def test_capacity_requests_are_listed_per_request():
    claim = next(o for o in shapes.example("gpu-allow-multiple-allocations__gpu-allow-multiple-allocations.yaml") if o["kind"] == "ResourceClaim")
    [r] = queries.claim_dra(claim)["capacity_requests"]
    assert r == {"request": "gpu", "alternative": None, "capacity": {"memory": "16Gi", "compute": "20"}}
