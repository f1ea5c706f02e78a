"""A pending claim whose selector cannot be evaluated (over a bound) or fails at run time on
the published devices is ``selector_invalid``; the diagnosis finishes in bounded time and the
other claims keep their own findings (the case's ``no_matching_device`` claim stays reported)."""

from __future__ import annotations

import copy
import time

import pytest
from diag_helpers import CASES

from claims.diagnosis import ClusterState, diagnose
from inventory.kube import parse_time
from inventory.snapshot import load_path, newest_timestamp

CASE = CASES / "no-matching-device-memory-selector" / "snapshot"
HUNDRED = "[" + ",".join(str(i) for i in range(100)) + "]"


def _with_hostile_copy(expression: str):
    objects = load_path(CASE).objects
    stuck = next(o for o in objects if o["kind"] == "ResourceClaim" and not (o.get("status") or {}).get("allocation"))
    # The case's pending pod: its generated claim is named after it.
    pod = next(o for o in objects if o["kind"] == "Pod" and stuck["metadata"]["name"].startswith(o["metadata"]["name"]))
    claim, twin = copy.deepcopy(stuck), copy.deepcopy(pod)
    claim["metadata"].update(name="hostile-gpu", uid="uid-hostile-claim")
    claim["metadata"].pop("ownerReferences", None)
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": expression}}]
    twin["metadata"].update(name="hostile", uid="uid-hostile-pod")
    twin["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "hostile-gpu"}]
    twin.get("status", {}).pop("resourceClaimStatuses", None)
    return [*objects, claim, twin], stuck


def _diagnose(objects):
    started = time.monotonic()
    findings = diagnose(ClusterState.from_objects(objects, {}), parse_time(newest_timestamp(objects)))
    return findings, time.monotonic() - started


@pytest.mark.parametrize("expression", [
    "(" * 100 + "device.driver == 'gpu.nvidia.com'" + ")" * 100,
    f"{HUNDRED}.all(a, {HUNDRED}.all(b, {HUNDRED}.all(c, a + b + c >= 0)))",
    "device.driver == '" + "x" * 11_000 + "'",
], ids=["100-parentheses", "list-comprehension", "over-10240-bytes"])
def test_a_selector_over_the_bounds_is_selector_invalid_and_the_other_claim_keeps_its_finding(expression):
    objects, stuck = _with_hostile_copy(expression)
    findings, took = _diagnose(objects)
    assert took < 30
    by_claim = {(f.category, f.objects[0].name) for f in findings}
    assert ("no_matching_device", stuck["metadata"]["name"]) in by_claim
    hostile = [f for f in findings if f.objects[0].name == "hostile-gpu"]
    assert [f.category for f in hostile] == ["selector_invalid"]
    assert hostile[0].evidence["selectors"][0]["source"] == "request"
    assert "hostile" in {o.name for o in hostile[0].objects}
    assert findings.failures == ()


def test_a_selector_failing_at_run_time_on_the_devices_is_a_critical_selector_invalid():
    objects, stuck = _with_hostile_copy("device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'")
    findings, _ = _diagnose(objects)
    hostile = [f for f in findings if f.objects[0].name == "hostile-gpu" and f.category == "selector_invalid"]
    assert len(hostile) == 1 and hostile[0].severity == "critical"
    assert hostile[0].evidence["runtime_errors"] and "noSuchAttribute" in hostile[0].evidence["runtime_errors"][0]
    assert ("no_matching_device", stuck["metadata"]["name"]) in {(f.category, f.objects[0].name) for f in findings}


def test_a_guarded_selector_is_not_selector_invalid():
    objects, _ = _with_hostile_copy(
        "'noSuchAttribute' in device.attributes['gpu.nvidia.com'] && device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'")
    findings, _ = _diagnose(objects)
    assert "selector_invalid" not in {f.category for f in findings}
