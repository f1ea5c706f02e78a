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


def _rv(cluster, uid):
    try:
        return ResourceClaim.objects.filter(cluster=cluster, uid=uid).values_list("resource_version", flat=True).first()
    except OperationalError:  # SQLite: the watcher's sync is writing this table; ask again
        return None


def test_a_change_is_stored_within_two_seconds_and_polls_stand_back(fake, cluster):
    cmd = Command()
    worker = threading.Thread(target=lambda: (cmd.watch(interval=0.2, checkpoint=60, max_seconds=30), connection.close()))
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not SyncRun.objects.filter(cluster=cluster, status="ok").exists():
            assert time.monotonic() < deadline, "the first sync did not end"
            time.sleep(0.1)
        assert locks.holder_of(cluster.pk)  # the watcher holds the cluster: polls stand back
        assert tasks.dispatch_due_syncs() == 0
        time.sleep(0.5)  # the watches are open now
        runs = SyncRun.objects.filter(cluster=cluster).count()
        claim = a_claim(fake)
        claim["metadata"].setdefault("annotations", {})["claimscope.test/touched"] = "watch"
        seen = len(fake.requests)
        item = fake.apply(claim)
        changed = time.monotonic()
        while _rv(cluster, claim["metadata"]["uid"]) != item["metadata"]["resourceVersion"]:
            assert time.monotonic() - changed < 2.0, "the change was not stored within 2 s"
            time.sleep(0.05)
        # Applied by a sync of the change alone: no relist, one more run.
        assert SyncRun.objects.filter(cluster=cluster).count() == runs + 1
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
