"""Each fault of the API server: nothing stored is lost, the run ends within its deadline with
the right status and message, and a later run catches up with the change it missed."""

from __future__ import annotations

import time

import pytest

from inventory.models import ResourceClaim
from inventory.runs import run_sync
from tests.live.helpers import a_claim, served, stored

pytestmark = pytest.mark.django_db

CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


def _touch(fake):
    claim = a_claim(fake)
    claim["metadata"].setdefault("annotations", {})["claimscope.test/touched"] = str(time.monotonic())
    return fake.apply(claim)


def _another_claim(fake, item):
    return served(fake, "ResourceClaim", CLAIMS, lambda c: c["metadata"]["uid"] != item["metadata"]["uid"])


def _has(cluster, item):
    rv = ResourceClaim.objects.filter(cluster=cluster, uid=item["metadata"]["uid"]).values_list("resource_version", flat=True).first()
    return rv == item["metadata"]["resourceVersion"]


# (fault setup, expected status, a phrase of the run's message or errors, is the change in?)
FAULTS = {
    "500 once on the claims watch": (lambda f: f.inject("status", CLAIMS, watch=True, status=500), "ok", "", True),
    "429 with Retry-After": (lambda f: f.inject("status", CLAIMS, watch=True, status=429, retry_after=1,
                                                 reason="TooManyRequests", message="slow down"), "ok", "", True),
    "connection reset": (lambda f: f.inject("reset", CLAIMS, watch=True), "ok", "", True),
    "500 on every try": (lambda f: f.inject("status", CLAIMS, watch=True, status=503, times=99, reason="ServiceUnavailable",
                                            message="etcd leader changed"), "partial", "etcd leader changed", False),
    "403 with a Status": (lambda f: f.inject("status", CLAIMS, watch=True, status=403, times=99), "partial",
                          'cannot watch resource "resourceclaims" in API group "resource.k8s.io"', False),
    "401": (lambda f: setattr(f, "token", "revoked"), "failed", "401", False),
    "malformed JSON in a watch": (lambda f: f.inject("malformed", CLAIMS, watch=True), "partial", "not JSON", False),
    "a watch stream cut mid-event": (lambda f: f.inject("cut", CLAIMS, watch=True), "partial", "inside an event", True),
    "a trickling watch": (lambda f: f.inject("trickle", CLAIMS, watch=True, interval=0.5), "ok", "", False),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_fault_loses_nothing_and_the_next_run_catches_up(fake, cluster, name, live_settings):
    setup, status, phrase, caught = FAULTS[name]
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    item = _touch(fake)
    setup(fake)
    token = fake.token
    started = time.monotonic()
    run = run_sync(cluster)
    took = time.monotonic() - started
    assert took < live_settings.KUBE_READ_DEADLINE_SECONDS
    assert run.status == status, (run.status, run.error, run.errors)
    text = run.error + " ".join(run.errors)
    assert phrase in text
    after = stored(cluster)
    assert set(before) <= set(after)  # nothing stored was lost
    assert {k: v for k, v in after.items() if k[0] != "ResourceClaim"} == {k: v for k, v in before.items() if k[0] != "ResourceClaim"}
    assert _has(cluster, item) is caught
    # The fault passes: the next run stores the change.
    fake.faults.clear()
    fake.token = "test-token" if token == "revoked" else token
    later = run_sync(cluster)
    assert later.status == "ok", later.errors
    assert _has(cluster, item)
    assert set(before) <= set(stored(cluster))


def test_a_410_as_an_error_event_relists_the_kind_and_deletes_what_vanished(fake, cluster):
    assert run_sync(cluster).status == "ok"
    item = _touch(fake)
    gone = _another_claim(fake, item)
    fake.remove(gone)
    fake.compact()  # the stored cursors are now too old: the watch answers ERROR 410
    fake.requests.clear()
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert any(r.startswith(CLAIMS + "?limit=") for r in fake.requests)  # relisted
    assert _has(cluster, item)
    assert not ResourceClaim.objects.filter(cluster=cluster, uid=gone["metadata"]["uid"]).exists()


def test_a_410_error_event_in_the_middle_of_a_watch_relists_the_kind(fake, cluster):
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    item = _touch(fake)
    fake.inject("gone", CLAIMS, watch=True)
    fake.requests.clear()
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert any(r.startswith(CLAIMS + "?limit=") for r in fake.requests)  # relisted after the ERROR event
    assert _has(cluster, item)
    assert set(before) <= set(stored(cluster))


def test_malformed_json_in_a_list_deletes_nothing_and_the_next_list_catches_up(fake, cluster):
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    gone = _another_claim(fake, {"metadata": {"uid": ""}})
    fake.remove(gone)
    fake.compact()  # the claims are listed next
    fake.inject("malformed", CLAIMS, watch=False)
    run = run_sync(cluster)
    assert run.status == "partial"
    assert "not a JSON list" in " ".join(run.errors)
    assert set(before) <= set(stored(cluster))
    later = run_sync(cluster)
    assert later.status == "ok", later.errors
    assert not ResourceClaim.objects.filter(cluster=cluster, uid=gone["metadata"]["uid"]).exists()


def test_a_410_on_a_continue_token_lists_again_from_the_start(fake, cluster, live_settings):
    live_settings.KUBE_PAGE_SIZE = 1
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    item = _touch(fake)
    fake.compact()  # the claims are listed again...
    fake.inject("expire", CLAIMS)  # ...and their first continue token expires while paging
    fake.requests.clear()
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    firsts = [r for r in fake.requests if r.startswith(CLAIMS + "?limit=") and "continue=" not in r]
    assert len(firsts) == 2  # listed from the start once more
    assert _has(cluster, item)
    assert set(before) <= set(stored(cluster))


def test_a_trickling_list_ends_at_the_request_deadline_and_deletes_nothing(fake, cluster, live_settings):
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    gone = _another_claim(fake, {"metadata": {"uid": ""}})
    fake.remove(gone)
    fake.compact()  # the next run must list the claims
    fake.inject("trickle", CLAIMS, watch=False, interval=2.0, times=99)
    started = time.monotonic()
    run = run_sync(cluster)
    took = time.monotonic() - started
    assert run.status == "partial"
    assert "within the deadline" in " ".join(run.errors)
    assert took < live_settings.KUBE_READ_DEADLINE_SECONDS
    assert set(before) <= set(stored(cluster))  # the vanished claim is kept until a good list
    fake.faults.clear()
    later = run_sync(cluster)
    assert later.status == "ok", later.errors
    assert not ResourceClaim.objects.filter(cluster=cluster, uid=gone["metadata"]["uid"]).exists()


def test_a_dead_api_server_fails_the_run_with_the_reason_and_keeps_everything(fake, cluster):
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    fake.stop()
    run = run_sync(cluster)
    assert run.status == "failed"
    assert "/version" in run.error
    assert stored(cluster) == before


def test_a_deletion_seen_in_a_partial_read_is_applied_by_the_next_good_one(fake, cluster):
    from inventory.models import WatchCursor

    assert run_sync(cluster).status == "ok"
    gone = _another_claim(fake, {"metadata": {"uid": ""}})
    cursor = WatchCursor.objects.get(cluster=cluster, target="ResourceClaim").resource_version
    fake.remove(gone)
    fake.inject("status", "/api/v1/pods", watch=True, status=403, times=99)  # another kind fails
    run = run_sync(cluster)
    assert run.status == "partial"
    # A partial read deletes nothing, and the claims' cursor stays before the deletion...
    assert ResourceClaim.objects.filter(cluster=cluster, uid=gone["metadata"]["uid"]).exists()
    assert WatchCursor.objects.get(cluster=cluster, target="ResourceClaim").resource_version == cursor
    fake.faults.clear()
    # ...so the next good read sees the DELETED event again and applies it.
    later = run_sync(cluster)
    assert later.status == "ok", later.errors
    assert later.counts["ResourceClaim"]["deleted"] == 1
    assert not ResourceClaim.objects.filter(cluster=cluster, uid=gone["metadata"]["uid"]).exists()
