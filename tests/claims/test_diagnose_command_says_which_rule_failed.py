"""``manage.py diagnose`` prints the findings of the rules that finished and says on stderr
which rule failed, for a snapshot as for a stored cluster."""

from __future__ import annotations

import io

from django.core.management import call_command

from tests.conftest import CASES

CASE = CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot"


def _broken(monkeypatch):
    from claims.diagnosis.context import Context

    def broken(self, claim):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(Context, "feasibility", broken)


def test_a_failed_rule_is_named_on_stderr_for_a_snapshot(monkeypatch):
    _broken(monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    call_command("diagnose", "--snapshot", str(CASE), stdout=out, stderr=err)
    assert "rule_allocation failed" in err.getvalue() and "RecursionError" in err.getvalue()
    assert "capacity_exhausted" not in out.getvalue()


def test_a_failed_rule_is_named_on_stderr_for_a_stored_cluster(monkeypatch, sync_snapshot):
    sync_snapshot(CASE, "case")
    _broken(monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    call_command("diagnose", "--cluster", "case", stdout=out, stderr=err)
    assert "rule_allocation failed" in err.getvalue()


def test_no_warning_when_every_rule_finished():
    out, err = io.StringIO(), io.StringIO()
    call_command("diagnose", "--snapshot", str(CASE), stdout=out, stderr=err)
    assert "capacity_exhausted" in out.getvalue() and err.getvalue() == ""
