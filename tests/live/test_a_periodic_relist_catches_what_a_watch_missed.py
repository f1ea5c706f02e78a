"""The periodic full relist (``KUBE_RELIST_SECONDS``) catches what no watch event told: an
object gone without a DELETED event stays until the relist, which then deletes it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from inventory.models import ResourceClaim, WatchCursor
from inventory.runs import run_sync

pytestmark = pytest.mark.django_db

CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"


def test_an_object_gone_without_an_event_is_deleted_by_the_next_relist(fake, cluster, live_settings):
    live_settings.KUBE_RELIST_SECONDS = 3600
    assert run_sync(cluster).status == "ok"
    missed = fake.lists[CLAIMS].pop()  # vanished, and no watcher was told
    uid = missed["metadata"]["uid"]
    assert run_sync(cluster).status == "ok"
    assert ResourceClaim.objects.filter(cluster=cluster, uid=uid).exists()  # a delta deletes only what it is told
    # An hour after the last full list, the next poll lists the kinds again.
    WatchCursor.objects.filter(cluster=cluster).update(listed_at=cluster.watch_cursors.first().listed_at - timedelta(hours=2))
    fake.requests.clear()
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert any(r.startswith(CLAIMS + "?limit=") for r in fake.requests)
    assert run.counts["ResourceClaim"]["deleted"] == 1
    assert not ResourceClaim.objects.filter(cluster=cluster, uid=uid).exists()
    # ...and the next poll watches again.
    fake.requests.clear()
    assert run_sync(cluster).status == "ok"
    assert not any(r.startswith(CLAIMS + "?limit=") for r in fake.requests)
