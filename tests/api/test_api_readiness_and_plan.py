"""Readiness evaluations (newest per cluster on request) and the migration plan through the API."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import resolve

from migration.models import ReadinessEvaluation
from tests.migration.migration_fixtures import WORKLOADS

pytestmark = pytest.mark.django_db


@pytest.fixture
def legacy(sync_snapshot):
    run = sync_snapshot(WORKLOADS, name="legacy")
    assert run.status == "ok", run.error


def test_latest_gives_one_evaluation_per_cluster_the_newest(api, fleet, legacy):
    body = api.get("/api/migration/readiness/", {"latest": "true"}).json()
    by_cluster = {r["cluster"]: r for r in body["results"]}
    assert len(by_cluster) == body["count"] == ReadinessEvaluation.objects.values("cluster").distinct().count()
    for name, row in by_cluster.items():
        newest = ReadinessEvaluation.objects.filter(cluster__name=name).order_by("-evaluated_at", "-pk").first()
        assert row["id"] == newest.pk and row["score"] == newest.score
        assert [i["id"] for i in row["items"]] == [i["id"] for i in newest.items]


def test_the_plan_of_a_device_plugin_cluster_lists_its_workloads_and_bundles(api, legacy):
    body = api.get("/api/migration/plan/", {"cluster": "legacy", "target": "1.36"}).json()
    assert body["cluster"] == "legacy" and body["target_version"] == "1.36"
    assert body["workloads_found"] == len(body["workloads"]) > 0
    assert body["bundles"] and all(u.startswith("http://testserver/migration/plan/legacy/bundle/") for u in body["bundles"].values())
    for url in body["bundles"].values():
        assert resolve(urlsplit(url).path).view_name == "migration:bundle"


def test_the_plan_needs_a_known_cluster_and_target(api, legacy):
    assert api.get("/api/migration/plan/").status_code == 400
    assert api.get("/api/migration/plan/", {"cluster": "legacy", "target": "9.99"}).status_code == 400
    assert api.get("/api/migration/plan/", {"cluster": "nope"}).status_code == 404
