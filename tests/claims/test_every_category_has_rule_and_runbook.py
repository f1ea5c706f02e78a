"""The category vocabulary, the rules and the runbooks stay in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from claims.diagnosis.engine import RULES
from claims.diagnosis.findings import CATEGORIES, Finding, ObjectRef
from claims.diagnosis.known_issues import load_known_issues

RUNBOOKS = Path(__file__).resolve().parents[2] / "claims" / "runbooks"


def test_vocabulary_has_every_documented_category():
    assert len(CATEGORIES) == len(set(CATEGORIES)) == 31


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_has_a_runbook_with_the_four_sections(category):
    text = (RUNBOOKS / f"{category}.md").read_text(encoding="utf-8")
    for heading in ("## What it means", "## Confirm", "## What to do", "## What not to do"):
        assert heading in text
    assert "kubectl" in text or "curl" in text


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_is_reported_by_a_rule(category):
    assert any(category in cats for _, cats in RULES)


def test_unknown_category_is_refused():
    with pytest.raises(ValueError):
        Finding("made_up", "warning", (ObjectRef("Pod", "a", "b"),), "s", "n")


def test_known_issues_load_and_name_their_fixed_release():
    issues = load_known_issues()
    assert {i.id for i in issues} >= {"k8s-133920", "k8s-134434", "k8s-139016"}
    assert all(i.fixed_in and i.link.startswith("https://github.com/kubernetes/") for i in issues)
    assert all(i.category in CATEGORIES for i in issues)
