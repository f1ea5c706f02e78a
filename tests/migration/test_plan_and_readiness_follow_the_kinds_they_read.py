"""The migration plan and the readiness checklist are derived by the sync that changed what
they read, in its transaction: the plan page serves the stored plan without planning again,
and a sync that changed only kinds they do not read (claims, Events) leaves both alone while
the diagnosis still runs."""

from __future__ import annotations

import copy

import pytest
import yaml
from migration_fixtures import WORKLOADS

from tests.conftest import write_list


@pytest.fixture
def objects():
    docs = []
    for name in ("workloads.yaml", "nodes-mixed.yaml"):
        docs += [d for d in yaml.safe_load_all((WORKLOADS / name).read_text()) if d]
    for n, d in enumerate(docs):  # as the API serves them: an unchanged object keeps its version
        d["metadata"].setdefault("resourceVersion", str(1000 + n))
    return docs


def _calls(monkeypatch, module, name):
    seen = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_the_plan_page_serves_the_plan_the_sync_stored(tmp_path, objects, sync_snapshot, client_in, monkeypatch):
    from migration import evaluation
    from migration.models import StoredPlan

    assert sync_snapshot(write_list(tmp_path / "s.json", objects), "plan").status == "ok"
    assert StoredPlan.objects.filter(cluster__name="plan", target_version="1.36").exists()

    def no_planning(*args, **kwargs):
        raise AssertionError("the page planned again")

    monkeypatch.setattr(evaluation, "plan_from_model", no_planning)
    resp = client_in.get("/migration/plan/", {"cluster": "plan"})
    assert resp.status_code == 200
    assert "Deployment" in resp.content.decode()


def test_a_sync_that_changed_only_claims_and_events_leaves_plan_and_checklist_alone(tmp_path, objects, sync_snapshot, monkeypatch):
    from claims import store
    from migration import evaluation

    assert sync_snapshot(write_list(tmp_path / "s.json", objects), "plan").status == "ok"
    plans = _calls(monkeypatch, evaluation, "refresh_plans")
    checks = _calls(monkeypatch, evaluation, "evaluate_cluster")
    diagnoses = _calls(monkeypatch, store, "sync_diagnosis")

    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "x.1", "namespace": "default", "uid": "ev-1", "resourceVersion": "5",
                     "creationTimestamp": "2026-11-02T09:00:00Z"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "x"},
        "reason": "Scheduled", "message": "ok", "type": "Normal",
    }  # fmt: skip
    assert sync_snapshot(write_list(tmp_path / "s.json", [*objects, event]), "plan").status == "ok"
    assert (len(plans), len(checks), len(diagnoses)) == (0, 0, 1)

    changed = copy.deepcopy(objects)
    node = next(o for o in changed if o["kind"] == "Node")
    node["metadata"]["labels"]["example.com/changed"] = "yes"
    node["metadata"]["resourceVersion"] = "77001"
    assert sync_snapshot(write_list(tmp_path / "s.json", [*changed, event]), "plan").status == "ok"
    assert (len(plans), len(checks), len(diagnoses)) == (1, 1, 2)
