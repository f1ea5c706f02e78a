"""A JSON List's items whose identity reads cleanly reach the sync in runs (``ItemRun``): a
re-sync counts the unchanged ones from their identity alone. Read that way or item by item,
the same file gives the same run (status, counts, problems) and the same stored objects, with
repeats, kinds the product does not keep, objects without a namespace or a uid, odd field
types and nested Lists among the items, and runs longer than one ``RUN_ITEMS``."""

from __future__ import annotations

import copy

import pytest

from inventory import readitem, snapshot
from tests.conftest import write_list


def _hostile_fleet():
    from devtools.benchfleet import generate_benchmark_fleet

    objects = generate_benchmark_fleet(20)  # 1,100 objects: several runs
    claims = [o for o in objects if o["kind"] == "ResourceClaim"]
    extra = []
    extra.append(copy.deepcopy(claims[0]))  # the same uid again, later in the file
    extra.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "x", "uid": "secret-1"}})
    no_ns = copy.deepcopy(claims[1])
    no_ns["metadata"].pop("namespace")
    no_ns["metadata"]["uid"] = "no-namespace-1"
    no_ns["metadata"]["name"] = "no-namespace"
    extra.append(no_ns)
    stand_in = copy.deepcopy(claims[2])
    stand_in["metadata"].pop("namespace")
    stand_in["metadata"].pop("uid")
    stand_in["metadata"]["name"] = "no-uid"
    extra.append(stand_in)
    odd = copy.deepcopy(claims[3])
    odd["metadata"]["name"] = 7  # not a string: decoded in full and refused by name
    odd["metadata"]["uid"] = "odd-1"
    extra.append(odd)
    nested = {"apiVersion": "v1", "kind": "List", "items": [copy.deepcopy(claims[4])]}
    nested["items"][0]["metadata"].update(uid="nested-1", name="nested")
    extra.append(nested)
    half = len(objects) // 2
    return objects[:half] + extra + objects[half:]


def _stored(cluster):
    from inventory.exports import stored_of_kind
    from inventory.kinds import BY_KIND

    out = set()
    for kind in BY_KIND:
        qs, namespaced = stored_of_kind(cluster, kind)
        fields = ["uid", "name", "resource_version"] + (["namespace"] if namespaced else [])
        out.update((kind, *row) for row in qs.values_list(*fields))
    return out


def _runs(paths, name, sync_snapshot):
    return [(r.status, r.counts, sorted(r.errors)) for r in (sync_snapshot(p, name) for p in paths)]


@pytest.mark.django_db
def test_runs_and_single_items_sync_alike(tmp_path, sync_snapshot, monkeypatch):
    from devtools.fleet import mutate_claims
    from inventory.models import Cluster

    objects = _hostile_fleet()
    path = write_list(tmp_path / "fleet.json", objects)
    changed = write_list(tmp_path / "changed.json", mutate_claims(objects, 0.1, seed=1))
    # The same file again (all unchanged), then a tenth of the claims changed, then one removed.
    gone = write_list(tmp_path / "gone.json", [o for o in objects if o is not objects[5]])
    paths = [path, path, changed, gone]
    in_runs = _runs(paths, "runs", sync_snapshot)
    monkeypatch.setattr(snapshot, "plain_ident", lambda raw, api_version="": None)  # every item alone
    alone = _runs(paths, "alone", sync_snapshot)
    assert in_runs == alone
    assert in_runs[1][1]["ResourceClaim"]["unchanged"] > readitem.RUN_ITEMS // 4
    assert in_runs[2][1]["ResourceClaim"]["updated"] > 10
    assert any("appears again" in e for e in in_runs[0][2])
    assert _stored(Cluster.objects.get(name="runs")) == _stored(Cluster.objects.get(name="alone"))


def test_load_path_reads_runs_as_items(tmp_path, monkeypatch):
    objects = _hostile_fleet()
    path = write_list(tmp_path / "fleet.json", objects)
    in_runs = snapshot.load_path(path)
    monkeypatch.setattr(snapshot, "plain_ident", lambda raw, api_version="": None)
    alone = snapshot.load_path(path)
    assert in_runs.objects == alone.objects and in_runs.errors == alone.errors
    assert len(in_runs.objects) == len(objects) - 1  # the repeat; the nested List unrolled


@pytest.mark.django_db
def test_a_typed_list_whose_items_name_no_kind_syncs_alike(tmp_path, sync_snapshot, monkeypatch):
    """An API list page (``kubectl get --raw``): the List names the items' kind and version, and
    items that name neither (every other one here) take them from it."""
    import json

    from devtools.benchfleet import generate_benchmark_fleet
    from inventory.models import Cluster

    claims = [o for o in generate_benchmark_fleet(20) if o["kind"] == "ResourceClaim"]
    for o in claims[::2]:
        o.pop("kind")
        o.pop("apiVersion")
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"kind": "ResourceClaimList", "apiVersion": "resource.k8s.io/v1", "items": claims}))
    in_runs = _runs([path, path], "runs", sync_snapshot)
    monkeypatch.setattr(snapshot, "plain_ident", lambda raw, api_version="": None)
    alone = _runs([path, path], "alone", sync_snapshot)
    assert in_runs == alone and in_runs[1][1]["ResourceClaim"]["unchanged"] == len(claims)
    assert _stored(Cluster.objects.get(name="runs")) == _stored(Cluster.objects.get(name="alone"))


@pytest.mark.django_db
@pytest.mark.parametrize("first", [
    # A stored Deployment whose uid is literally the stand-in of a namespace-less one.
    {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {},
     "metadata": {"name": "y", "namespace": "ns1", "uid": "Deployment//x", "resourceVersion": "5"}},
    # A skipped pod (no GPU) whose uid is that stand-in: the skip cache holds it.
    {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "i"}]},
     "metadata": {"name": "y", "namespace": "ns1", "uid": "Pod//x", "resourceVersion": "5"}},
], ids=["stored", "skipped"])
def test_an_item_without_namespace_or_uid_is_not_taken_for_a_namesake_stand_in(first, tmp_path, sync_snapshot, monkeypatch):
    from inventory.models import Cluster

    second = copy.deepcopy(first)
    second["metadata"] = {"name": "x", "resourceVersion": "5"}  # no namespace, no uid: "default" on the way in
    if second["kind"] == "Pod":
        second["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c"}]  # a GPU pod: kept
    paths = [write_list(tmp_path / "1.json", [first]), write_list(tmp_path / "2.json", [second])]
    in_runs = _runs(paths, "runs", sync_snapshot)
    monkeypatch.setattr(snapshot, "plain_ident", lambda raw, api_version="": None)
    alone = _runs(paths, "alone", sync_snapshot)
    assert in_runs == alone
    assert _stored(Cluster.objects.get(name="runs")) == _stored(Cluster.objects.get(name="alone"))
