"""A sync after a change resumes watches from the stored resourceVersions (no full list of
slices, claims or pods) and stores exactly what changed."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from inventory.models import Pod, ResourceClaim, WatchCursor
from inventory.runs import run_sync
from tests.live.helpers import a_claim, changed_counts, served, stored

pytestmark = pytest.mark.django_db

BIG = ("/apis/resource.k8s.io/v1/resourceslices", "/apis/resource.k8s.io/v1/resourceclaims", "/api/v1/pods")


def _requests(fake):
    out = []
    for r in fake.requests:
        u = urlparse(r)
        out.append((u.path, {k: v[0] for k, v in parse_qs(u.query).items()}))
    return out


def test_the_first_sync_lists_and_stores_a_cursor_per_list(fake, cluster):
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    cursors = dict(WatchCursor.objects.filter(cluster=cluster).values_list("target", "resource_version"))
    assert cursors["ResourceClaim"] == str(fake.resource_version)
    assert {"Event?fieldSelector=involvedObject.kind=Pod", "Event?fieldSelector=involvedObject.kind=Node"} <= set(cursors)
    assert all(WatchCursor.objects.filter(cluster=cluster).values_list("listed_at", flat=True))


def test_a_sync_after_a_change_watches_from_the_cursor_and_stores_only_the_change(fake, cluster):
    assert run_sync(cluster).status == "ok"
    before = stored(cluster)
    cursor = WatchCursor.objects.get(cluster=cluster, target="ResourceClaim").resource_version
    claim = a_claim(fake)
    claim["metadata"].setdefault("annotations", {})["claimscope.test/touched"] = "yes"
    fake.apply(claim)
    gone = served(fake, "Pod", "/api/v1/pods", lambda p: (p.get("spec") or {}).get("resourceClaims"))
    fake.remove(gone)
    fake.requests.clear()

    run = run_sync(cluster)

    assert run.status == "ok", run.errors
    reqs = _requests(fake)
    for path, q in reqs:
        if path in BIG:
            assert q.get("watch") == "true", (path, q)  # never a list of these
            assert q["resourceVersion"] == cursor and q["allowWatchBookmarks"] == "true"
    assert {p for p, _ in reqs} >= set(BIG)
    assert changed_counts(run) == {"ResourceClaim": {"updated": 1}, "Pod": {"deleted": 1}}
    after = stored(cluster)
    claim_key = ("ResourceClaim", claim["metadata"]["uid"])
    pod_key = ("Pod", gone["metadata"]["uid"])
    assert after[claim_key] != before[claim_key]
    assert pod_key in before and pod_key not in after
    assert {k: v for k, v in after.items() if k != claim_key} == {k: v for k, v in before.items() if k not in (claim_key, pod_key)}
    assert "touched" in str(ResourceClaim.objects.get(cluster=cluster, uid=claim["metadata"]["uid"]).raw)
    # The cursor moved to the last change (a bookmark carries the newest resourceVersion).
    assert int(WatchCursor.objects.get(cluster=cluster, target="ResourceClaim").resource_version) >= int(claim_rv(fake, claim))


def claim_rv(fake, claim):
    return next(i for i in fake.lists["/apis/resource.k8s.io/v1/resourceclaims"]
                if i["metadata"]["uid"] == claim["metadata"]["uid"])["metadata"]["resourceVersion"]


def test_a_sync_without_change_writes_nothing_and_reads_little(fake, cluster):
    assert run_sync(cluster).status == "ok"
    first = fake.bytes_sent
    fake.bytes_sent = 0
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert changed_counts(run) == {}
    assert fake.bytes_sent < first / 10  # bookmarks only, no lists
    # Kinds of CRDs not installed (the GPU Operator's, KServe...) are asked again only at the relist.
    asked = [r for r in fake.requests if r.startswith("/apis/nvidia.com/")]
    fake.requests.clear()
    assert asked  # by the first sync
    assert run_sync(cluster).status == "ok"
    assert not [r for r in fake.requests if r.startswith("/apis/nvidia.com/")]


def test_a_watch_brings_new_gpu_pods_and_skips_others_before_decoding(fake, cluster):
    assert run_sync(cluster).status == "ok"
    gpu = served(fake, "Pod", "/api/v1/pods", lambda p: (p.get("spec") or {}).get("resourceClaims"))
    gpu["metadata"].update(name=gpu["metadata"]["name"] + "-b", uid="0f0f0f0f-1111-4222-8333-444455556666")
    plain = served(fake, "Pod", "/api/v1/pods", lambda p: p["metadata"]["namespace"] == "kube-system")
    plain["metadata"].update(name=plain["metadata"]["name"] + "-b", uid="0f0f0f0f-1111-4222-8333-777788889999")
    fake.apply(gpu)
    fake.apply(plain)
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    assert changed_counts(run) == {"Pod": {"created": 1}}
    assert Pod.objects.filter(cluster=cluster, uid=gpu["metadata"]["uid"]).exists()
    assert not Pod.objects.filter(cluster=cluster, uid=plain["metadata"]["uid"]).exists()
    assert run.counts["skipped"]["Pod"] == 1


def test_a_quiet_lists_cursor_moves_with_the_bookmark(fake, cluster, live_settings):
    live_settings.KUBE_WATCH_SECONDS = 2  # the server bookmarks 2 s before a watch's timeout: at once
    assert run_sync(cluster).status == "ok"
    nodes = WatchCursor.objects.get(cluster=cluster, target="Node").resource_version
    claim = a_claim(fake)
    claim["metadata"].setdefault("labels", {})["claimscope.test/touched"] = "yes"
    item = fake.apply(claim)  # the cluster's resourceVersion moves; no Node changed
    assert run_sync(cluster).status == "ok"
    moved = WatchCursor.objects.get(cluster=cluster, target="Node").resource_version
    assert int(moved) > int(nodes) and moved == item["metadata"]["resourceVersion"]
    # Without a bookmark (a watch under 2 s gets none) the quiet list keeps its cursor.
    live_settings.KUBE_WATCH_SECONDS = 1
    fake.apply(claim)
    assert run_sync(cluster).status == "ok"
    assert WatchCursor.objects.get(cluster=cluster, target="Node").resource_version == moved
