"""``manage.py watch_clusters`` keeps the watches open: a change in the API server is stored
within seconds, the process holds the cluster's lease meanwhile, and releases it at the end."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError, connection

from inventory import locks, tasks
from inventory.management.commands.watch_clusters import Command
from inventory.models import ResourceClaim, SyncRun
from tests.live.helpers import a_claim

pytestmark = pytest.mark.django_db(transaction=True)


def _asked(query):
    """``query()``, asked again while SQLite's shared in-memory test database has a table
    locked by the watcher's sync ("database table is locked": it fails at once there instead
    of waiting for the lock, as a file database would)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return query()
        except OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _rv(cluster, uid):
    return _asked(lambda: ResourceClaim.objects.filter(cluster=cluster, uid=uid)
                  .values_list("resource_version", flat=True).first())


def _runs(cluster, **filters) -> int:
    return _asked(lambda: SyncRun.objects.filter(cluster=cluster, **filters).count())


def test_a_change_is_stored_within_two_seconds_and_polls_stand_back(fake, cluster):
    cmd = Command()
    worker = threading.Thread(target=lambda: (cmd.watch(interval=0.2, checkpoint=60, max_seconds=30), connection.close()))
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not _runs(cluster, status="ok"):
            assert time.monotonic() < deadline, "the first sync did not end"
            time.sleep(0.1)
        assert _asked(lambda: locks.holder_of(cluster.pk))  # the watcher holds the cluster: polls stand back
        assert _asked(tasks.dispatch_due_syncs) == 0
        time.sleep(0.5)  # the watches are open now
        runs = _runs(cluster)
        claim = a_claim(fake)
        claim["metadata"].setdefault("annotations", {})["claimscope.test/touched"] = "watch"
        seen = len(fake.requests)
        item = fake.apply(claim)
        changed = time.monotonic()
        while _rv(cluster, claim["metadata"]["uid"]) != item["metadata"]["resourceVersion"]:
            assert time.monotonic() - changed < 2.0, "the change was not stored within 2 s"
            time.sleep(0.05)
        # Applied by a sync of the change alone: no relist, one more run.
        assert _runs(cluster) == runs + 1
        assert not any("limit=" in r for r in fake.requests[seen:])
    finally:
        cmd.stop = True
        worker.join(30)
    assert locks.holder_of(cluster.pk) == ""


def test_the_command_runs_for_its_time_and_says_what_each_sync_did(fake, cluster, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    beat = tmp_path / "heartbeat"
    call_command("watch_clusters", "--cluster", cluster.name, "--max-seconds", "3", "--interval", "0.3",
                 "--heartbeat", str(beat), stdout=out)
    assert f"cluster {cluster.name}: ok in" in out.getvalue()
    assert beat.exists()
    assert locks.holder_of(cluster.pk) == ""
