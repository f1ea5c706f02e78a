"""/healthz says the process is up; /readyz says whether the database answers and clusters are fresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from inventory.models import Cluster, SourceKind, SyncStatus

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _cluster(name, age_s, kind=SourceKind.KUBECONFIG, status=SyncStatus.OK, enabled=True):
    at = None if age_s is None else timezone.now() - timedelta(seconds=age_s)
    return Cluster.objects.create(name=name, source_kind=kind, last_sync_at=at, last_sync_status=status, enabled=enabled)


def test_healthz_answers_ok(client):
    resp = client.get("/healthz")
    assert resp.status_code == 200 and resp.json() == {"status": "ok"}
    assert "no-cache" in resp["Cache-Control"]


def test_readyz_reports_the_last_sync_age_of_each_enabled_cluster_to_a_logged_in_user(client_in, settings):
    settings.READY_MAX_SYNC_AGE_SECONDS = 600
    _cluster("fresh", 30)
    _cluster("old", 3600)
    _cluster("off", 99999, enabled=False)
    resp = client_in.get("/readyz")
    body = resp.json()
    assert resp.status_code == 200 and body["database"] == "ok"
    rows = {r["cluster"]: r for r in body["clusters"]}
    assert set(rows) == {"fresh", "old"}
    assert 29 <= rows["fresh"]["last_sync_age_seconds"] < 120 and not rows["fresh"]["stale"]
    assert rows["old"]["last_sync_age_seconds"] >= 3600 and rows["old"]["stale"]


def test_readyz_is_503_when_every_enabled_cluster_is_stale(client, settings):
    settings.READY_MAX_SYNC_AGE_SECONDS = 600
    _cluster("old", 3600)
    _cluster("never", None, status="")
    resp = client.get("/readyz")
    assert resp.status_code == 503 and resp.json()["status"] == "stale"
    settings.READY_MAX_SYNC_AGE_SECONDS = 0  # check turned off
    assert client.get("/readyz").status_code == 200


def test_a_synced_snapshot_cluster_counts_as_fresh_forever(client, settings):
    """Beat never re-syncs a snapshot that synced OK, so its age says nothing about staleness."""
    settings.READY_MAX_SYNC_AGE_SECONDS = 600
    _cluster("snap", 86400, kind=SourceKind.SNAPSHOT)
    _cluster("live", 86400)
    assert client.get("/readyz").status_code == 200
    Cluster.objects.filter(name="snap").update(last_sync_status=SyncStatus.FAILED)
    assert client.get("/readyz").status_code == 503


def test_readyz_with_no_clusters_is_ready(client):
    assert client.get("/readyz").status_code == 200


def test_readyz_is_503_and_healthz_200_when_the_database_is_unreachable():
    """A real connection failure (nothing listens on the port), in a fresh process."""
    code = (
        "import django, json; django.setup()\n"
        "from django.test import Client\n"
        "c = Client()\n"
        "r = c.get('/readyz'); h = c.get('/healthz')\n"
        "print(json.dumps([r.status_code, r.json(), h.status_code]))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://nobody:secret@127.0.0.1:9/none",
        "CLAIMSCOPE_ENV_FILE": "/nonexistent",
        "SECRET_KEY": "x" * 60,
    }
    env.pop("DATABASE_URL_FILE", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    ready_status, body, health_status = json.loads(out.stdout.strip().splitlines()[-1])
    assert ready_status == 503 and body["status"] == "unavailable" and body["database"] == "OperationalError"
    assert "secret" not in json.dumps(body)
    assert health_status == 200
