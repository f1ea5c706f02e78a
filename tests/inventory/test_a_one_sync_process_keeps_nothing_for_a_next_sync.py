"""A process that syncs once and ends (the ``sync_cluster`` command, ``sync.one_sync``) keeps
nothing for a later sync: no model, no stored keys, no diagnosis state. A worker keeps all
three, its kept state already indexed for the next change (``index_for_patching``). Both give
the same runs, objects and findings, and a worker's next sync after either one is right."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from claims import store
from claims.models import Finding
from devtools.fleet import generate_fleet, mutate_claims
from inventory import reconcile, sync
from inventory.models import Cluster, ResourceClaim, SourceKind
from inventory.runs import after_read_hooks
from inventory.sources import SnapshotSource
from tests.conftest import write_list

pytestmark = pytest.mark.django_db


def _findings(cluster):
    return sorted(Finding.objects.filter(cluster=cluster, resolved_at__isnull=True)
                  .values_list("category", "namespace", "name", "uid"))


def _held(cluster):
    return (cluster.pk in sync._models, cluster.pk in reconcile._KNOWN, cluster.pk in store._states)


@pytest.fixture(autouse=True)
def _forget():
    sync.forget_models()
    reconcile.forget_known()
    store._states.clear()
    yield
    sync.forget_models()
    reconcile.forget_known()
    store._states.clear()


def test_a_command_keeps_nothing_and_a_worker_keeps_a_patchable_state(tmp_path):
    fleet = generate_fleet(6, seed=3)
    first = write_list(tmp_path / "fleet.json", fleet)
    second = write_list(tmp_path / "changed.json", mutate_claims(fleet, 0.3, seed=4))

    call_command("sync_cluster", "--snapshot", str(first), "--cluster", "once", stdout=io.StringIO())
    once = Cluster.objects.get(name="once")
    assert _held(once) == (False, False, False)
    assert sync.next_sync_follows()  # the command's one_sync ended with it

    worker = Cluster.objects.create(name="worker", source_kind=SourceKind.SNAPSHOT)
    run = sync.sync_cluster(worker, SnapshotSource(first), after_read=after_read_hooks)
    assert run.status == "ok", run.errors
    assert _held(worker) == (True, True, True)
    state = store._states[worker.pk][2]
    # What ``patched`` edits is built with the state, not by the first change that follows.
    assert {"_pods_by_claim", "_claims_by_owner", "_pods_by_uid"} <= set(state.__dict__)

    assert _findings(once) and [f[:3] for f in _findings(once)] == [f[:3] for f in _findings(worker)]
    for cluster in (once, worker):  # a worker's next sync, after a command's or its own
        run = sync.sync_cluster(cluster, SnapshotSource(second), after_read=after_read_hooks)
        assert run.status == "ok", run.errors
        assert run.counts["ResourceClaim"]["updated"] > 0
    assert [f[:3] for f in _findings(once)] == [f[:3] for f in _findings(worker)]
    assert (sorted(ResourceClaim.objects.filter(cluster=once).values_list("name", "state", "resource_version"))
            == sorted(ResourceClaim.objects.filter(cluster=worker).values_list("name", "state", "resource_version")))


def test_one_sync_holds_only_while_open():
    assert sync.next_sync_follows()
    with sync.one_sync():
        assert not sync.next_sync_follows()
        with pytest.raises(RuntimeError), sync.one_sync():
            raise RuntimeError("a sync that fails")
        assert not sync.next_sync_follows()
    assert sync.next_sync_follows()
