"""One sync per cluster at a time: a second sync waits or refuses with a clear message, and
beat's dispatcher never queues a sync while one is queued or running."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from inventory import locks, runs, tasks
from inventory.models import SyncRun

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tracked(monkeypatch):
    """Wrap the sync: count how many run at once (each takes at least 0.6 s)."""
    state = {"active": 0, "peak": 0}
    guard = threading.Lock()
    real = runs.sync_cluster

    def sync(*args, **kw):
        with guard:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
        try:
            time.sleep(0.6)
            return real(*args, **kw)
        finally:
            with guard:
                state["active"] -= 1

    monkeypatch.setattr(runs, "sync_cluster", sync)
    return state


def _in_thread(fn, results, key):
    def run():
        try:
            results[key] = fn()
        except Exception as exc:  # collected for the assertions
            results[key] = exc
        finally:
            connection.close()

    t = threading.Thread(target=run)
    t.start()
    return t


def test_a_second_sync_waits_for_the_first_and_they_never_overlap(fake, cluster, tracked):
    results: dict = {}
    first = _in_thread(lambda: runs.run_sync(cluster, wait=60), results, "a")
    time.sleep(0.2)
    second = _in_thread(lambda: runs.run_sync(cluster, wait=60), results, "b")
    first.join(60)
    second.join(60)
    assert tracked["peak"] == 1
    assert results["a"].status == "ok" and results["b"].status == "ok", results
    assert SyncRun.objects.filter(cluster=cluster, status="ok").count() == 2
    assert locks.holder_of(cluster.pk) == ""  # released


def test_a_second_sync_that_cannot_wait_refuses_with_a_clear_message(fake, cluster, tracked):
    results: dict = {}
    first = _in_thread(lambda: runs.run_sync(cluster, wait=60), results, "a")
    time.sleep(0.2)
    with pytest.raises(locks.SyncBusy, match=r"cluster live is already being synced by .*this sync was not started"):
        runs.run_sync(cluster, wait=0.1)
    assert tasks.sync_cluster_task(cluster.pk) == "busy"  # the task says so and records no failed run
    first.join(60)
    assert results["a"].status == "ok"
    assert tracked["peak"] == 1
    assert not SyncRun.objects.filter(cluster=cluster, status="failed").exists()


def test_the_dispatcher_queues_nothing_while_a_sync_is_queued_or_running(fake, cluster, monkeypatch):
    queued = []
    monkeypatch.setattr(tasks.sync_cluster_task, "delay", lambda *a: queued.append(a))
    assert tasks.dispatch_due_syncs() == 1  # due: never synced
    assert tasks.dispatch_due_syncs() == 0  # still queued: not a second time
    assert tasks.dispatch_due_syncs() == 0
    cluster_id, token = queued[0]
    assert locks.holder_of(cluster_id) == token
    # The queued task takes its own marker over, runs, and frees the cluster.
    assert tasks.sync_cluster_task(cluster_id, token) == "ok"
    assert locks.holder_of(cluster_id) == ""
    # A sync running from elsewhere (the watch mode, a command) holds it too.
    cluster.last_sync_at = None
    cluster.save()
    assert locks.try_acquire(cluster.pk, "elsewhere:1:2:3")
    assert tasks.dispatch_due_syncs() == 0
    locks.release(cluster.pk, "elsewhere:1:2:3")
    assert tasks.dispatch_due_syncs() == 1


def test_a_lease_left_by_a_dead_process_is_taken_over(fake, cluster):
    import socket

    dead = f"{socket.gethostname()}:999999:1:abc"  # no such pid
    assert locks.try_acquire(cluster.pk, dead)
    assert runs.run_sync(cluster, wait=0).status == "ok"


def test_the_dispatcher_closes_a_run_left_running_by_a_dead_worker(fake, cluster, monkeypatch):
    import socket

    from django.utils import timezone

    monkeypatch.setattr(tasks.sync_cluster_task, "delay", lambda *a: None)
    dead = SyncRun.objects.create(cluster=cluster, source="watch", started=timezone.now(),
                                  worker=f"{socket.gethostname()}:999999")
    assert tasks.dispatch_due_syncs() == 1
    dead.refresh_from_db()
    assert dead.status == "failed" and "ended before it finished" in dead.error
