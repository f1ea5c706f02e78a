"""A claim pending past its threshold always gets a finding: when no other rule explains it,
``pending_unexplained`` says what was checked and quotes the scheduler; a known, fixed
scheduler bug for the running version is named instead (``scheduler_known_bug``)."""

from __future__ import annotations

from dx import base_cluster, categories, names, pending, request, run, scheduler_event, scheduler_pod

from claims.diagnosis import Thresholds
from inventory.kube import parse_time

WAIT = "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found."
TIMEOUT = "0/2 nodes are available: 2 timed out trying to allocate devices. still not schedulable"


def test_an_allocatable_claim_pending_an_hour_is_pending_unexplained_quoting_the_scheduler():
    f = run(base_cluster() + pending(request("gpu")) + [scheduler_event("team-a", "job", WAIT)])
    assert categories(f) == ["pending_unexplained"]
    assert {("ResourceClaim", "team-a", "job-gpu"), ("Pod", "team-a", "job")} <= names(f[0])
    assert "Insufficient cpu" in f[0].summary and "60 min" in f[0].summary
    assert "feasible" in f[0].evidence["checked"][0]
    assert f[0].evidence["uids"] == ["uid-claim-job-gpu", "uid-pod-job"]


def test_the_catch_all_waits_for_the_threshold():
    objs = base_cluster() + pending(request("gpu"))
    assert run(objs, thresholds=Thresholds(pending_seconds=7200)) == []
    assert run(objs, now=parse_time("2026-11-20T10:04:00Z")) == []


def test_a_claim_another_rule_explains_gets_no_catch_all():
    f = run(base_cluster() + pending(request("gpu", "gpu.example.com")))
    assert categories(f) == ["device_class_missing"]


def test_a_pod_whose_claims_are_allocated_but_that_is_not_bound_is_reported():
    objs = base_cluster() + pending(request("gpu"))
    c = objs[-2]
    c["status"] = {"allocation": {
        "allocationTimestamp": "2026-11-20T10:00:05Z",
        "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["gpu-node-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "job", "uid": "uid-pod-job"}]}
    f = run(objs)
    assert categories(f) == ["pending_unexplained"]
    assert f[0].evidence["waiting"] == "unbound" and "not bound" in f[0].summary


def test_the_filter_timeout_bug_is_named_on_an_affected_scheduler_and_not_after_the_fix():
    objs = base_cluster() + pending(request("gpu")) + [scheduler_event("team-a", "job", TIMEOUT)]
    f = run([*objs, scheduler_pod("v1.35.3")])
    assert categories(f) == ["scheduler_known_bug"]
    assert f[0].evidence["known_issue"] == "k8s-137607" and f[0].evidence["fixed_in"] == "1.36.0"
    fixed = run([*objs, scheduler_pod("v1.36.4")])  # 1.36.0-1.36.3 have k8s-140431
    assert categories(fixed) == ["pending_unexplained"]
    assert "timed out trying to allocate devices" in fixed[0].summary


def test_an_allocatable_claim_on_a_1_36_scheduler_with_the_counter_leak_names_the_bug():
    f = run(base_cluster() + pending(request("gpu")) + [scheduler_pod("v1.36.2")])
    assert categories(f) == ["scheduler_known_bug"]
    assert f[0].evidence["known_issue"] == "k8s-140431"
    assert ("ResourceClaim", "team-a", "job-gpu") in names(f[0])
    assert categories(run(base_cluster() + pending(request("gpu")) + [scheduler_pod("v1.36.4")])) == [
        "pending_unexplained"]
