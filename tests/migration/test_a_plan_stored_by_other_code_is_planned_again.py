"""A stored migration plan names the planning code that made it: after a deploy that changes
the planner (its wording, its findings), the plan page plans again instead of serving the old
release's plan until the cluster's data next changes."""

from __future__ import annotations

import pickle

import pytest
from django.conf import settings

from inventory.models import Cluster
from migration import evaluation
from migration.models import StoredPlan

pytestmark = pytest.mark.django_db


def test_a_plan_made_by_other_code_is_planned_again(sync_snapshot, monkeypatch):
    sync_snapshot(settings.BASE_DIR / "demo" / "migration" / "legacy-dp", "legacy-dp")
    cluster = Cluster.objects.get(name="legacy-dp")
    plan = evaluation.cluster_plan(cluster, "1.36")
    row = StoredPlan.objects.get(cluster=cluster, target_version="1.36")
    planned = []
    real = evaluation.plan_from_model
    monkeypatch.setattr(evaluation, "plan_from_model", lambda *a, **k: planned.append(1) or real(*a, **k))

    assert evaluation.cluster_plan(cluster, "1.36") == plan and not planned  # this code's own: served
    for older in (pickle.dumps(plan), pickle.dumps(("an older release", plan))):  # before fingerprints; another
        StoredPlan.objects.filter(pk=row.pk).update(plan=older)
        assert evaluation.cluster_plan(cluster, "1.36") == plan
        stored = pickle.loads(bytes(StoredPlan.objects.get(pk=row.pk).plan))
        assert stored[0] == evaluation.planner_fingerprint()
    assert len(planned) == 2
