"""A real Celery worker consumes inventory.sync_cluster from Redis and the SyncRun lands.

Runs when CLAIMSCOPE_TEST_REDIS_URL names a Redis (CI sets it); skipped otherwise, unless
CLAIMSCOPE_REQUIRE_REDIS=1, which turns the skip into a failure.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from django.db import connections

from inventory.models import Cluster, SyncRun, SyncStatus
from tests.conftest import VKS_SLICES

REDIS_URL = os.environ.get("CLAIMSCOPE_TEST_REDIS_URL", "")


@pytest.fixture
def redis_url() -> str:
    if not REDIS_URL:
        if os.environ.get("CLAIMSCOPE_REQUIRE_REDIS") == "1":
            pytest.fail("CLAIMSCOPE_REQUIRE_REDIS=1 but CLAIMSCOPE_TEST_REDIS_URL is not set")
        pytest.skip("set CLAIMSCOPE_TEST_REDIS_URL to run against a real Redis")
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} does not answer: {exc}")
    return REDIS_URL


@pytest.fixture
def celery_app(redis_url):
    from celery import Celery
    from celery.contrib.testing.worker import start_worker

    # A fresh app: the project's app may already hold a producer pool for the eager default,
    # and broker settings changed later would not reach it. Shared tasks register on it too.
    app = Celery("claimscope-redis-test")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=redis_url, task_always_eager=False, result_backend=None)
    app.loader.import_default_modules()
    import inventory.tasks  # noqa: F401 - registers the shared tasks on every app
    # The worker thread opens its own connection; close it after each task so teardown can flush.
    connections.settings["default"]["CONN_MAX_AGE"] = 0
    queue = f"claimscope-test-{uuid.uuid4().hex[:8]}"  # never consume another run's leftovers
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, queues=[queue],
                          shutdown_timeout=30):
            yield app, queue
    finally:
        app.close()
        connections.settings["default"]["CONN_MAX_AGE"] = 60


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_a_queued_sync_and_the_sync_run_lands(celery_app):
    app, queue = celery_app
    cluster = Cluster.objects.create(name="vks", snapshot_path=str(VKS_SLICES))
    assert not app.conf.task_always_eager
    assert "inventory.sync_cluster" in app.tasks
    app.send_task("inventory.sync_cluster", args=[cluster.pk], queue=queue)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run = SyncRun.objects.filter(cluster=cluster).exclude(status=SyncStatus.RUNNING).first()
        if run:
            break
        time.sleep(0.2)
    else:
        pytest.fail("no finished SyncRun within 60 s: the worker did not consume the task")
    assert run.status == SyncStatus.OK
    assert run.counts["ResourceSlice"]["created"] == 2
    cluster.refresh_from_db()
    assert cluster.last_sync_status == SyncStatus.OK
