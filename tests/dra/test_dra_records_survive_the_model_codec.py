"""The records with the DRA fields (counters, shares, device status, health reports, policies)
come back equal from the stored cluster model's codec (inventory.model_codec)."""

from __future__ import annotations

import copy

from inventory import model_codec, records
from tests.dra import shapes
from tests.dra.test_inventory_json_adds_allocatable_now_taints_health_and_sharers import _objects


def test_every_dra_record_round_trips():
    objs = _objects()
    claim = shapes.allocate(next(o for o in shapes.example("binding-conditions__binding-conditions.yaml") if o["kind"] == "ResourceClaimTemplate"),
                            [], name="bound")  # fmt: skip
    claim["status"] = copy.deepcopy(shapes.fragment("dra-example-driver-binding-conditions-status-fragment.v1.yaml")["status"])
    claim["status"]["devices"][0]["data"] = {"health": "Unknown", "ids": [1, 2]}
    shared = copy.deepcopy(next(o for o in objs if o["spec"].get("driver") == "gpu.example.com"))
    shared["metadata"]["uid"] = "uid-shared-policy"
    shared["spec"]["devices"][1].update({
        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "8Gi", "validValues": ["8Gi", "16Gi"]}}},
        "bindingConditions": ["Ready"], "bindsToNode": True,
    })  # fmt: skip
    recs = [records.parse_object(o) for o in [*objs, claim, shared]]
    entries = [(r.uid, None, r) for r in recs]
    back = {}
    for name, _, data in model_codec.encode(entries):
        back.update({uid: r for uid, _, r in model_codec.decode(name, data)})
    assert len(back) == len(recs)
    for r in recs:
        assert back[r.uid] == r, r.name
