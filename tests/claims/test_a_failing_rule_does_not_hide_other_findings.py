"""One rule raising (a bug, an object no rule expected) keeps every other rule's findings and
what the failing rule reported before it failed; the failure is returned as data, so the sync
can say that an analysis failed instead of showing a clean cluster."""

from __future__ import annotations

from diag_helpers import CASES

from claims.diagnosis import ClusterState, Thresholds, diagnose, run_diagnosis
from claims.diagnosis.context import Context
from claims.diagnosis.engine import RULES, AnalysisFailure
from claims.diagnosis.verdicts import Verdict, render
from inventory.kube import parse_time
from inventory.snapshot import load_path, newest_timestamp

CASE = CASES / "no-matching-device-memory-selector" / "snapshot"


def _state():
    objects = load_path(CASE).objects
    return ClusterState.from_objects(objects, {}), parse_time(newest_timestamp(objects))


def _broken_after_one(real):
    def rule_broken(ctx):
        yield from list(real(ctx))[:1]
        raise RecursionError("maximum recursion depth exceeded")
    return rule_broken


def test_a_rule_that_raises_keeps_the_other_rules_findings_and_is_reported():
    state, now = _state()
    healthy = diagnose(state, now)
    assert healthy and healthy.failures == ()
    _, categories = RULES[0]
    assert "no_matching_device" in categories

    def rule_explodes(ctx):
        raise KeyError("spec")
        yield  # a generator, as the rules are

    rules = ((rule_explodes, categories), *RULES[1:])
    result = run_diagnosis(state, now, rules=rules)
    # The claim the failed rule would have explained still gets a finding: never silent.
    assert [f for f in result.findings if f.category != "pending_unexplained"] == [
        f for f in healthy if f.category not in categories]
    fallback = [f for f in result.findings if f.category == "pending_unexplained"]
    assert fallback and fallback[0].evidence["failed_rules"] == [
        "test_a_failing_rule_does_not_hide_other_findings.rule_explodes"]
    assert "failed" in fallback[0].summary
    assert result.failures == (AnalysisFailure("test_a_failing_rule_does_not_hide_other_findings.rule_explodes",
                                               categories, "KeyError: 'spec'", 0),)
    assert "no_matching_device" in result.failures[0].message()


def test_findings_reported_before_the_rule_failed_are_kept():
    state, now = _state()
    allocation_rule, categories = RULES[0]
    wanted = [render(v) if isinstance(v, Verdict) else v
              for v in allocation_rule(Context(state=state, now=now, thresholds=Thresholds()))]
    assert wanted
    result = run_diagnosis(state, now, rules=((_broken_after_one(allocation_rule), categories), *RULES[1:]))
    assert wanted[0] in result.findings
    assert len(result.failures) == 1 and result.failures[0].kept == 1
    assert result.failures[0].error.startswith("RecursionError")


def test_a_healthy_run_reports_no_failure():
    state, now = _state()
    assert run_diagnosis(state, now).failures == ()
