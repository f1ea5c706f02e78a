"""Through the real sync: a snapshot holding a claim whose selector nests 100 parentheses (a
RecursionError inside the sync's analysis once, which then stored no finding at all) stores a
``selector_invalid`` finding for it and keeps the other stuck claim's ``no_matching_device``."""

from __future__ import annotations

import copy
import json

import pytest
from diag_helpers import CASES

from claims.models import Finding
from inventory.snapshot import load_path

pytestmark = pytest.mark.django_db

CASE = CASES / "no-matching-device-memory-selector" / "snapshot"


def test_a_sync_stores_selector_invalid_and_the_other_claims_findings(tmp_path, sync_snapshot):
    objects = load_path(CASE).objects
    stuck = next(o for o in objects if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation"))
    pod = next(o for o in objects if o["kind"] == "Pod" and stuck["metadata"]["name"].startswith(o["metadata"]["name"]))
    claim, twin = copy.deepcopy(stuck), copy.deepcopy(pod)
    claim["metadata"].update(name="hostile-gpu", uid="uid-hostile-claim")
    claim["metadata"].pop("ownerReferences", None)
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": "(" * 100 + "device.driver == 'gpu.nvidia.com'" + ")" * 100}}]
    twin["metadata"].update(name="hostile", uid="uid-hostile-pod")
    twin["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "hostile-gpu"}]
    twin.get("status", {}).pop("resourceClaimStatuses", None)
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [*objects, claim, twin]}))
    run = sync_snapshot(tmp_path, name="hostile")
    assert run.status == "ok", run.errors
    stored = {(f.category, f.name) for f in Finding.objects.filter(cluster__name="hostile", resolved_at__isnull=True)}
    assert ("selector_invalid", "hostile-gpu") in stored
    assert ("no_matching_device", stuck["metadata"]["name"]) in stored
