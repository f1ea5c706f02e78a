"""Helpers for the migration tests: load fixture files as raw objects (deep copies)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from inventory.snapshot import load_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "migration"
WORKLOADS = FIXTURES / "workloads"
CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"


def load(*names: str) -> list[dict[str, Any]]:
    """Objects of the named fixture files (relative to tests/fixtures/migration), in order."""
    out: list[dict[str, Any]] = []
    for name in names:
        out.extend(load_path(FIXTURES / name).objects)
    return copy.deepcopy(out)


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o.get("kind") == kind and o["metadata"]["name"] == name)


def device_plugin_cluster() -> list[dict[str, Any]]:
    """A device-plugin cluster: mixed GPU nodes, the workloads, a ClusterPolicy."""
    return load("workloads/nodes-mixed.yaml", "workloads/workloads.yaml", "v1_clusterpolicy.yaml")
