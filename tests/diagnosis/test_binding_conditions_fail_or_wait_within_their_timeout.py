"""Binding conditions, on the example driver's real binding-conditions demo and claim status:
a claim whose devices' conditions are not yet True is waiting, not stuck, before the binding
timeout (600 s); past it, or when a binding failure condition is True, it is ``binding_failed``."""

from __future__ import annotations

import copy

from dx import categories, claim_from_template, example_cluster, load_yaml, names, of_kind, run

from claims.diagnosis import Thresholds
from inventory.kube import parse_time

ALLOCATED = "2026-05-15T14:00:00Z"


def _cluster(ready: str, failed: str | None = None):
    demo = load_yaml("k8s/dra/binding-conditions__binding-conditions.yaml")
    status = load_yaml("k8s/dra/dra-example-driver-binding-conditions-status-fragment.v1.yaml")[0]["status"]
    template, pod0 = of_kind(demo, "ResourceClaimTemplate")[0], of_kind(demo, "Pod")[0]
    c = claim_from_template(template, pod0, "gpu", "2026-05-15T13:59:58Z")
    st = copy.deepcopy(status)
    st["allocation"]["allocationTimestamp"] = ALLOCATED
    st["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["dra-example-driver-cluster-worker"]}]}]}
    st["reservedFor"][0]["uid"] = pod0["metadata"]["uid"]
    conds = st["devices"][0]["conditions"]
    conds[0]["status"] = ready
    if failed is not None:
        conds.append({"type": "BindingFailureConditions", "status": failed, "reason": "AttachFailed",
                      "message": "fabric attach failed", "lastTransitionTime": "2026-05-15T14:02:00Z"})
    c["status"] = st
    return [*example_cluster(), template, pod0, c], c["metadata"]["name"]


def test_conditions_not_yet_true_within_the_timeout_are_waiting_not_stuck():
    objs, _ = _cluster(ready="False")
    assert run(objs, now=parse_time("2026-05-15T14:08:00Z")) == []


def test_conditions_not_true_past_the_binding_timeout_are_binding_failed():
    objs, name = _cluster(ready="False")
    f = run(objs, now=parse_time("2026-05-15T14:11:00Z"))
    assert categories(f) == ["binding_failed"]
    assert f[0].evidence["subcategory"] == "binding_timeout"
    assert f[0].evidence["pending_conditions"] == ["BindingConditions"]
    assert {("ResourceClaim", "binding-conditions", name), ("Pod", "binding-conditions", "pod0")} <= names(f[0])
    # A longer bindingTimeout in the scheduler configuration: still waiting.
    assert run(objs, now=parse_time("2026-05-15T14:11:00Z"), thresholds=Thresholds(binding_timeout_seconds=1200)) == []


def test_a_true_binding_failure_condition_is_binding_failed_at_once():
    objs, _ = _cluster(ready="False", failed="True")
    f = run(objs, now=parse_time("2026-05-15T14:03:00Z"))
    assert categories(f) == ["binding_failed"]
    assert f[0].evidence["failed_conditions"][0]["type"] == "BindingFailureConditions"
    assert "fabric attach failed" in f[0].summary


def test_a_false_failure_condition_and_met_conditions_are_no_binding_finding():
    objs, _ = _cluster(ready="True", failed="False")
    assert "binding_failed" not in categories(run(objs, now=parse_time("2026-05-15T14:20:00Z")))
