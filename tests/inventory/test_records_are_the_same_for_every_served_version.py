"""A DRA object gives the same record whichever version the API server served it in:
resource.k8s.io v1beta1 (device fields under ``basic``, flat requests), v1beta2 (the v1 shape)
and v1, and the historical v1alpha3 (bare capacity quantities).

Real objects: the NVIDIA DRA driver's quickstart demos, published upstream in both v1beta1 and
v1; real v1 slices and a claim with status, served again as v1beta1 and v1beta2 servers
would serve them (``_as_v1beta1``/``_as_v1beta2``, the inverse of ``inventory.normalize``, written
here from the API types); a real v1beta1 claim with status; a real v1alpha3 slice.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from inventory.records import ResourceClaim, ResourceClaimTemplate, ResourceSlice, parse_object
from inventory.snapshot import load_path
from tests.conftest import FIXTURES, H100_SLICES, VKS_CLAIM, VKS_SLICES

QUICKSTART = FIXTURES / "k8s/claims-and-templates"
PAIRS = sorted(p.name for p in (QUICKSTART / "quickstart-v1").glob("*.yaml"))
MOCK_SLICES = FIXTURES / "k8s/resourceslices/dra-example-driver-mock-gpus.v1.yaml"
DRANET_CLAIM = FIXTURES / "k8s/claims-with-status/dranet-pr154-resourceclaim-gpu-and-nic-with-status.v1beta1.yaml"
IMEX_V1ALPHA3 = FIXTURES / "k8s/resourceslices/nvidia-imex-channels-historical.v1alpha3.yaml"
EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _dra(path):
    return {(o["kind"], o["metadata"]["name"]): o for o in load_path(path).objects
            if o["apiVersion"].startswith("resource.k8s.io/")}


def _as_v1beta2(obj):
    out = copy.deepcopy(obj)
    out["apiVersion"] = "resource.k8s.io/v1beta2"
    return out


def _as_v1beta1(obj):
    """As a v1beta1 server serves it: slice device fields under ``basic``; requests flat."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = "resource.k8s.io/v1beta1"
    spec = out["spec"]
    if out["kind"] == "ResourceSlice":
        spec["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in spec["devices"]]
    else:
        devices = spec["spec"]["devices"] if out["kind"] == "ResourceClaimTemplate" else spec["devices"]
        devices["requests"] = [{"name": r["name"], **r.get("exactly", {}), **{k: v for k, v in r.items() if k not in ("name", "exactly")}}
                               for r in devices["requests"]]
    return out


@pytest.mark.parametrize("name", PAIRS)
def test_quickstart_claims_and_templates_published_as_v1beta1_and_v1_give_equal_records(name):
    old, new = _dra(QUICKSTART / "quickstart-v1beta1" / name), _dra(QUICKSTART / "quickstart-v1" / name)
    assert old.keys() == new.keys() and old
    for key, raw in old.items():
        before, after = parse_object(raw), parse_object(new[key])
        assert isinstance(before, ResourceClaim | ResourceClaimTemplate)
        assert before == after, key
        # Not two empty records: the v1beta1 object's flat requests are what both read.
        devices = raw["spec"]["spec"]["devices"] if key[0] == "ResourceClaimTemplate" else raw["spec"]["devices"]
        assert [r.main.device_class for r in before.requests] == [r["deviceClassName"] for r in devices["requests"]]
        assert [r.name for r in before.requests] == [r["name"] for r in devices["requests"]]


@pytest.mark.parametrize("path", [H100_SLICES, VKS_SLICES, MOCK_SLICES], ids=lambda p: p.name)
def test_a_slice_served_as_v1beta1_v1beta2_or_v1_gives_one_record(path):
    slices = [o for o in load_path(path).objects if o["kind"] == "ResourceSlice"]
    assert slices
    for raw in slices:
        v1 = parse_object(raw)
        assert isinstance(v1, ResourceSlice) and v1.api_version == "resource.k8s.io/v1"
        assert parse_object(_as_v1beta2(raw)) == v1
        assert parse_object(_as_v1beta1(raw)) == v1
        assert [d.name for d in v1.devices] == [d["name"] for d in raw["spec"]["devices"]]
        for d, rd in zip(v1.devices, raw["spec"]["devices"], strict=True):
            for attr, value in rd.get("attributes", {}).items():
                assert d.attr(attr) == next(iter(value.values()))
            assert d.capacity == {(k if "/" in k else f"{v1.driver}/{k}"): c["value"] for k, c in rd.get("capacity", {}).items()}


def test_a_claim_with_status_served_as_v1beta1_v1beta2_or_v1_gives_one_record():
    (raw,) = [o for o in load_path(VKS_CLAIM).objects if o["kind"] == "ResourceClaim"]
    v1 = parse_object(raw)
    assert parse_object(_as_v1beta2(raw)) == v1
    assert parse_object(_as_v1beta1(raw)) == v1
    results = raw["status"]["allocation"]["devices"]["results"]
    assert [(r.request, r.driver, r.pool, r.device) for r in v1.results] == [
        (r["request"], r["driver"], r["pool"], r["device"]) for r in results
    ]
    assert [c.uid for c in v1.reserved_for] == [c["uid"] for c in raw["status"]["reservedFor"]]
    assert v1.state == "in_use"


def test_a_real_v1beta1_claim_reads_its_flat_requests_allocation_and_consumers():
    (raw,) = [o for o in load_path(DRANET_CLAIM).objects if o["kind"] == "ResourceClaim"]
    assert raw["apiVersion"] == "resource.k8s.io/v1beta1"
    raw["metadata"].setdefault("namespace", "default")  # as the sources' prepare step gives it (published without)
    claim = parse_object(raw)
    requests = raw["spec"]["devices"]["requests"]
    assert [(r.name, r.main.device_class, r.main.count) for r in claim.requests] == [
        (r["name"], r["deviceClassName"], r.get("count", 1)) for r in requests
    ]
    assert all(r.exactly is not None and r.first_available is None for r in claim.requests)
    results = raw["status"]["allocation"]["devices"]["results"]
    assert [r.device_key for r in claim.results] == [(r["driver"], r["pool"], r["device"]) for r in results]
    assert [(c.resource, c.name) for c in claim.reserved_for] == [(c["resource"], c["name"]) for c in raw["status"].get("reservedFor", [])]
    # And as the v1 server would serve it.
    v1 = copy.deepcopy(raw)
    v1["apiVersion"] = "resource.k8s.io/v1"
    v1["spec"]["devices"]["requests"] = [
        {"name": r["name"], "exactly": {k: r[k] for k in EXACT_FIELDS if k in r}} for r in requests
    ]
    assert parse_object(v1) == claim


def test_a_v1alpha3_slice_reads_its_bare_capacities_as_quantities():
    slices = [o for o in load_path(IMEX_V1ALPHA3).objects if o["kind"] == "ResourceSlice"]
    assert slices and all(o["apiVersion"] == "resource.k8s.io/v1alpha3" for o in slices)
    for raw in slices:
        rec = parse_object(raw)
        assert rec.api_version == "resource.k8s.io/v1"
        for d, rd in zip(rec.devices, raw["spec"]["devices"], strict=True):
            basic = rd.get("basic", rd)
            assert d.capacity == {(k if "/" in k else f"{rec.driver}/{k}"): str(v) for k, v in (basic.get("capacity") or {}).items()}
            assert {k.split("/")[-1] for k in d.attributes} == {k.split("/")[-1] for k in basic.get("attributes") or {}}


def test_records_are_frozen():
    rec = parse_object(load_path(VKS_CLAIM).objects[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.name = "other"  # type: ignore[misc]
