"""The live source streams list pages into the sync: items keep their text with kind and
apiVersion put back, a relist stores each object once, a failed page loses nothing stored."""

from __future__ import annotations

import copy

import pytest
import yaml

from inventory import reconcile
from inventory.models import (
    Cluster,
    Device,
    DeviceClass,
    KubeObject,
    Node,
    Pod,
    ResourceClaim,
    ResourceSlice,
    SourceKind,
)
from inventory.parse import object_uid
from inventory.snapshot import load_path
from inventory.sources import LiveSource
from inventory.sync import sync_cluster
from tests.conftest import CASES, H100_SLICES, VKS_CLAIM, VKS_SLICES
from tests.fake_apiserver import FakeAPIServer

pytestmark = pytest.mark.django_db

SLICES_PATH = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS_PATH = "/apis/resource.k8s.io/v1/resourceclaims"
CASE = CASES / "healthy-cluster-h100/snapshot/cluster.yaml"
HOSTILE = 'say "hi" \\ back\\slash </script><script>alert(1)</script> ☃ 日本 \U0001f680'


def _objects():
    objs = []
    for f in (H100_SLICES, VKS_SLICES, VKS_CLAIM):
        objs.extend(yaml.safe_load(f.read_text())["items"])
    # Nodes, classes and pods of a real-shaped case (its slices repeat the aicr ones).
    objs.extend(o for o in load_path(CASE).objects if o["kind"] in ("Node", "DeviceClass", "Pod", "Event"))
    for kind in ("ResourceSlice", "ResourceClaim", "Pod", "Node"):
        o = next(o for o in objs if o["kind"] == kind)
        o["metadata"].setdefault("labels", {})["claimscope.test/hostile"] = HOSTILE
    return objs


@pytest.fixture
def objects():
    return _objects()


@pytest.fixture
def fake(tmp_path, objects):
    server = FakeAPIServer()
    server.empty_lists_for_all_kinds()
    server.serve_objects(copy.deepcopy(objects))
    url = server.start()
    server.kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", url)
    yield server
    server.stop()


def _source(fake, page_size=2):
    return LiveSource(kubeconfig=str(fake.kubeconfig), page_size=page_size, timeout=5.0)


def _cluster():
    return Cluster.objects.create(name="live", source_kind=SourceKind.KUBECONFIG)


def _stored(cluster):
    out = {}
    for model in (Node, DeviceClass, ResourceSlice, ResourceClaim, Pod):
        rows = model.objects.filter(cluster=cluster)
        if model is Node:
            rows = rows.filter(from_slices=False)  # stand-ins for nodes known only from slices
        for uid, raw in rows.values_list("uid", "raw"):
            out[(raw.get("kind"), uid)] = raw
    for kind, uid, raw in KubeObject.objects.filter(cluster=cluster).values_list("kind", "uid", "raw"):
        out[(kind, uid)] = raw
    return out


def _uid(kind, item):
    """The stored uid of a list item (items carry no kind; uid-less ones get a stand-in)."""
    return object_uid({**item, "kind": kind})


def _counts(cluster):
    return {m.__name__: m.objects.filter(cluster=cluster).count() for m in (Node, DeviceClass, ResourceSlice, ResourceClaim, Pod, Device)}


def test_list_items_are_stored_with_kind_and_api_version_put_back(fake, objects):
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    stored = _stored(cluster)
    want = {(o["kind"], object_uid(o)): o for o in objects}
    assert set(stored) == set(want)
    for key, raw in stored.items():
        assert raw == want[key], key  # kind, apiVersion and every other field, hostile labels too
    assert {raw["apiVersion"] for (k, _), raw in stored.items() if k == "ResourceSlice"} == {"resource.k8s.io/v1"}
    assert {raw["apiVersion"] for (k, _), raw in stored.items() if k in ("Node", "Pod", "Event")} == {"v1"}


@pytest.mark.parametrize("page_size", [1, 3, 500])
def test_the_stored_objects_do_not_depend_on_the_page_size(fake, objects, page_size, monkeypatch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 2)
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake, page_size=page_size))
    assert run.status == "ok", run.errors
    assert _stored(cluster) == {(o["kind"], object_uid(o)): o for o in objects}


def test_items_that_carry_their_own_kind_keep_it(fake, objects):
    # Some servers and proxies keep kind/apiVersion in list items: nothing is added twice.
    fake.lists[SLICES_PATH] = [copy.deepcopy(o) for o in objects if o["kind"] == "ResourceSlice"]
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    stored = _stored(cluster)
    for o in objects:
        if o["kind"] == "ResourceSlice":
            assert stored[("ResourceSlice", object_uid(o))] == o


def test_an_expired_continue_token_relists_and_stores_each_object_once(fake, objects, monkeypatch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 2)  # page one is flushed before the relist
    fake.fail_once[(SLICES_PATH, 2)] = 410
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    slices = sum(1 for o in objects if o["kind"] == "ResourceSlice")
    assert run.counts["ResourceSlice"]["seen"] == slices
    assert run.counts["ResourceSlice"]["created"] == slices
    assert ResourceSlice.objects.filter(cluster=cluster).count() == slices
    assert run.counts["Device"]["created"] == Device.objects.filter(cluster=cluster).count()
    assert _stored(cluster) == {(o["kind"], object_uid(o)): o for o in objects}
    # The relist really happened: the first page was asked for twice.
    assert sum(1 for r in fake.requests if r.startswith(SLICES_PATH) and "continue=" not in r) == 2


def test_a_relist_on_a_resync_counts_like_a_resync_without_one(fake, objects):
    cluster = _cluster()
    sync_cluster(cluster, _source(fake))
    plain = sync_cluster(cluster, _source(fake))
    fake.fail_once[(SLICES_PATH, 1)] = 410
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    for kind in ("ResourceSlice", "ResourceClaim", "Device", "Pod", "DeviceClass"):
        assert run.counts[kind] == plain.counts[kind], kind
    slices = sum(1 for o in objects if o["kind"] == "ResourceSlice")
    with_rv = sum(1 for o in objects if o["kind"] == "ResourceSlice" and o["metadata"].get("resourceVersion"))
    # Slices without a resourceVersion (the vks dump has none) are rewritten each time.
    assert run.counts["ResourceSlice"] == {"seen": slices, "created": 0, "updated": slices - with_rv, "deleted": 0, "unchanged": with_rv}


def test_a_500_on_a_later_page_keeps_earlier_pages_and_deletes_nothing(fake, objects, monkeypatch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 2)
    cluster = _cluster()
    assert sync_cluster(cluster, _source(fake)).status == "ok"
    before = _counts(cluster)
    # The server now lists a new slice first, no longer has the last slice, claim and pod,
    # and fails on page three of the slices.
    new = copy.deepcopy(fake.lists[SLICES_PATH][0])
    new["metadata"].update(name="new-slice", uid="5e5e5e5e-0000-4000-8000-000000000001", resourceVersion="77")
    new["spec"]["pool"]["name"] = "new-pool"
    gone_slice = fake.lists[SLICES_PATH].pop()
    gone_claim = fake.lists[CLAIMS_PATH].pop()
    pods_path = next(p for p in fake.lists if p.endswith("/pods"))
    gone_pod = fake.lists[pods_path].pop() if fake.lists[pods_path] else None
    fake.lists[SLICES_PATH].insert(0, new)
    fake.failures[(SLICES_PATH, 2)] = 500
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "partial"
    assert any("HTTP 500" in e and "ResourceSlice" in e for e in run.errors)
    assert all(c.get("deleted", 0) == 0 for k, c in run.counts.items() if k != "skipped")
    # Page one was read and kept; nothing vanished of any kind, read before or after the failure.
    assert ResourceSlice.objects.filter(cluster=cluster, uid=new["metadata"]["uid"]).exists()
    assert Device.objects.filter(cluster=cluster, pool="new-pool").exists()
    assert ResourceSlice.objects.filter(cluster=cluster, uid=_uid("ResourceSlice", gone_slice)).exists()
    assert ResourceClaim.objects.filter(cluster=cluster, uid=_uid("ResourceClaim", gone_claim)).exists()
    if gone_pod is not None:
        assert Pod.objects.filter(cluster=cluster, uid=_uid("Pod", gone_pod)).exists()
    after = _counts(cluster)
    assert after["ResourceSlice"] == before["ResourceSlice"] + 1
    assert {k: v for k, v in after.items() if k not in ("ResourceSlice", "Device")} == {
        k: v for k, v in before.items() if k not in ("ResourceSlice", "Device")
    }
    assert after["Device"] > before["Device"]


def test_a_500_on_the_first_sync_stores_the_pages_before_it(fake, objects, monkeypatch):
    monkeypatch.setattr(reconcile, "FLUSH_OBJECTS", 1)
    fake.failures[(SLICES_PATH, 1)] = 500
    cluster = _cluster()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "partial"
    first_page = fake.lists[SLICES_PATH][:2]
    assert set(ResourceSlice.objects.filter(cluster=cluster).values_list("uid", flat=True)) == {
        _uid("ResourceSlice", o) for o in first_page
    }
    # Kinds listed after the failed one are still read and stored.
    assert ResourceClaim.objects.filter(cluster=cluster).count() == len(fake.lists[CLAIMS_PATH])
    assert Pod.objects.filter(cluster=cluster).exists()


def test_a_clean_resync_after_the_failure_deletes_what_vanished(fake, objects):
    cluster = _cluster()
    sync_cluster(cluster, _source(fake))
    gone = fake.lists[SLICES_PATH].pop()
    fake.failures[(SLICES_PATH, 1)] = 500
    assert sync_cluster(cluster, _source(fake)).status == "partial"
    assert ResourceSlice.objects.filter(cluster=cluster, uid=_uid("ResourceSlice", gone)).exists()
    fake.failures.clear()
    run = sync_cluster(cluster, _source(fake))
    assert run.status == "ok", run.errors
    assert run.counts["ResourceSlice"]["deleted"] == 1
    assert not ResourceSlice.objects.filter(cluster=cluster, uid=_uid("ResourceSlice", gone)).exists()
