"""Shared helpers for the stored-diagnosis tests: case folders synced through the real hook."""

from __future__ import annotations

from pathlib import Path

import yaml

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
CASE_DIRS = sorted(p.parent for p in CASES.glob("*/expected.yaml"))


def expected(case: Path) -> dict:
    return yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))


def expected_category(case: Path) -> str:
    return expected(case)["expected_diagnosis"]["category"]


def cluster_name(case: Path) -> str:
    """A slug for the cluster row (names are <= 63 characters)."""
    return case.name[:60]
