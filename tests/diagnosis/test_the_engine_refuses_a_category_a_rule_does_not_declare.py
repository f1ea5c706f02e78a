"""The engine checks each rule against the categories it declares in ``RULES``: a rule that
emits another one stops with an ``AnalysisFailure`` (what it emitted before is kept); a
verdict is written by its category's renderer."""

from __future__ import annotations

from dx import base_cluster

from claims.diagnosis import ClusterState, run_diagnosis
from claims.diagnosis.engine import RULES, AnalysisFailure
from claims.diagnosis.findings import CATEGORIES
from claims.diagnosis.verdicts import RENDERERS, Verdict
from inventory.kube import ObjectRef, parse_time

NOW = parse_time("2026-11-20T11:00:00Z")
NODE = ObjectRef("Node", None, "gpu-node-1")


def _verdict(category):
    return Verdict(category, "warning", (NODE,), ("uid-node",), {"subcategory": "test"})


def test_a_rule_emitting_an_undeclared_category_becomes_an_analysis_failure():
    def rule_liar(ctx):
        yield _verdict("device_taint_rule_too_broad")

    state = ClusterState.from_objects(base_cluster())
    result = run_diagnosis(state, NOW, rules=((rule_liar, ("capacity_exhausted",)),))
    assert result.findings == []
    (failure,) = result.failures
    assert isinstance(failure, AnalysisFailure) and "device_taint_rule_too_broad" in failure.error


def test_a_declared_verdict_is_rendered_with_its_facts_and_uids():
    def rule_ok(ctx):
        yield _verdict("pending_unexplained").__class__(
            "pending_unexplained", "warning", (ObjectRef("Pod", "team-a", "job"),), ("uid-pod-job",),
            {"waiting": "unallocated", "pending_seconds": 900.0, "threshold_seconds": 300, "checked": ["c: feasible"],
             "failed_rules": [], "scheduler": []})

    state = ClusterState.from_objects(base_cluster())
    result = run_diagnosis(state, NOW, rules=((rule_ok, ("pending_unexplained",)),))
    (f,) = result.findings
    assert f.summary.startswith("Pod team-a/job has been pending 15 min")
    assert f.evidence["uids"] == ["uid-pod-job"] and f.evidence["checked"] == ["c: feasible"]


def test_every_category_has_a_renderer_and_every_rule_declares_known_categories():
    assert set(RENDERERS) == set(CATEGORIES)
    for _, cats in RULES:
        assert set(cats) <= set(CATEGORIES)
