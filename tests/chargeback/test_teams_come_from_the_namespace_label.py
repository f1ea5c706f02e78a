"""Teams come from a label (or annotation) of the claims' Namespace, the key chosen in
``CLAIMSCOPE_CHARGEBACK_TEAM_LABEL``: the sync reads Namespace objects, and the chargeback
groups each namespace's GPU-hours under the team its Namespace names."""

from __future__ import annotations

import io
import json

import pytest
from chargeback_helpers import CASES
from django.core.management import call_command

from inventory.snapshot import load_path
from tests.conftest import write_list


def _namespace(name: str, labels=None, annotations=None) -> dict:
    # As `kubectl get namespace -o json` prints one.
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "uid": f"ns-{name}", "resourceVersion": "101",
                         "creationTimestamp": "2026-10-01T00:00:00Z",
                         "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
                         "annotations": annotations or {}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["labels", "annotations"])
def test_each_namespace_counts_under_the_team_its_namespace_names(tmp_path, sync_snapshot, settings, where):
    objects = load_path(CASES / "capacity-exhausted-all-gpus-allocated" / "snapshot").objects
    held = sorted({o["metadata"]["namespace"] for o in objects if o["kind"] == "ResourceClaim"})
    assert held
    team = {"platform.example.com/team": "ml-research"}
    objects += [_namespace(n, **{where: team}) for n in held]
    assert sync_snapshot(write_list(tmp_path / "cluster.json", objects), "teams").status == "ok"

    settings.CLAIMSCOPE_CHARGEBACK_TEAM_LABEL = "platform.example.com/team"
    out = io.StringIO()
    call_command("chargeback", "--cluster", "teams", "--format", "json", stdout=out)
    rows = [r for r in json.loads(out.getvalue())["namespaces"] if r["gpu_hours"] > 0]
    assert rows
    assert {r["team"] for r in rows} == {"ml-research"}
