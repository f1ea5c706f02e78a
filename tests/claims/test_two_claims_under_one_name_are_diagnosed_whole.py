"""A file may hold two claims (or pods) under one namespace/name with different uids: an API
server never serves that, a hand-edited or merged snapshot can. The diagnosis state keys them
by name and holds one; which one may move with any change, so a scoped diagnosis could keep
findings of the other. While namesakes exist the cluster is diagnosed whole: the open findings
agree with a whole-cluster diagnosis after every change."""

from __future__ import annotations

import copy

from tests.claims.test_scoped_diagnosis_equals_a_whole_cluster_one import _check


def _namesake(objects, kind, pick):
    i = next(i for i, o in enumerate(objects) if o["kind"] == kind and pick(o))
    twin = copy.deepcopy(objects[i])
    twin["metadata"]["uid"] = "namesake-" + twin["metadata"]["uid"]
    twin["metadata"]["resourceVersion"] = str(int(twin["metadata"]["resourceVersion"]) + 500_000)
    twin.pop("status", None)  # the twin is pending (a claim) or not yet scheduled (a pod)
    if kind == "Pod":
        twin["spec"].pop("nodeName", None)
    return twin


def test_namesake_claims_and_pods_leave_what_a_whole_diagnosis_finds(tmp_path, sync_snapshot, monkeypatch):
    from devtools.benchfleet import generate_benchmark_fleet

    objects = generate_benchmark_fleet(3)
    claim = _namesake(objects, "ResourceClaim", lambda o: (o.get("status") or {}).get("reservedFor"))
    pod = _namesake(objects, "Pod", lambda o: o["spec"].get("resourceClaims"))
    # First in the file: the changes the check makes (deleted, deleting, re-created...) reach them.
    scoped = _check([claim, pod, *objects], tmp_path, sync_snapshot, monkeypatch)
    assert not any(scoped), "a cluster with namesakes was diagnosed by scope"


def test_which_namesake_the_state_holds_does_not_follow_the_order_of_the_records():
    from claims.diagnosis.state import ClusterState
    from devtools.benchfleet import generate_benchmark_fleet
    from inventory import records as rec

    objects = generate_benchmark_fleet(3)
    claim = _namesake(objects, "ResourceClaim", lambda o: (o.get("status") or {}).get("reservedFor"))
    pod = _namesake(objects, "Pod", lambda o: o["spec"].get("resourceClaims"))
    records = list(rec.as_records([claim, pod, *objects], []))
    first, last = ClusterState.from_records(records), ClusterState.from_records(records[::-1])
    for kind, key in (("claims", (claim["metadata"]["namespace"], claim["metadata"]["name"])),
                      ("pods", (pod["metadata"]["namespace"], pod["metadata"]["name"]))):
        assert getattr(first, kind)[key].uid == getattr(last, kind)[key].uid


def test_a_worker_and_a_fresh_process_agree_after_the_namesake_not_held_changed(tmp_path, sync_snapshot):
    """The reviewer's case: the twin's reservedFor names a pod that is gone; a change to the
    twin alone must leave the same findings whether the worker's patched state, the stored
    model or a parse of the stored objects is diagnosed."""
    from claims.store import diagnose_cluster
    from devtools.benchfleet import generate_benchmark_fleet
    from inventory import exports
    from inventory.models import Cluster
    from inventory.sync import forget_models
    from tests.claims.test_scoped_diagnosis_equals_a_whole_cluster_one import _open, _whole
    from tests.conftest import write_list

    forget_models()
    objects = generate_benchmark_fleet(3)
    i = next(i for i, o in enumerate(objects) if o["kind"] == "ResourceClaim" and (o.get("status") or {}).get("reservedFor"))
    twin = copy.deepcopy(objects[i])
    twin["metadata"]["uid"] = "namesake-" + twin["metadata"]["uid"]
    twin["metadata"]["resourceVersion"] = str(int(twin["metadata"]["resourceVersion"]) + 500_000)
    twin["status"]["reservedFor"] = [{"resource": "pods", "name": "gone", "uid": "gone-uid"}]
    base = [twin, *objects]
    assert sync_snapshot(write_list(tmp_path / "b.json", base), "ns").status in ("ok", "partial")
    changed = copy.deepcopy(base)
    changed[0]["metadata"]["labels"] = {"x": "1"}
    changed[0]["metadata"]["resourceVersion"] = "123456789"
    assert sync_snapshot(write_list(tmp_path / "c.json", changed), "ns").status in ("ok", "partial")
    cluster = Cluster.objects.get(name="ns")

    def found(model):
        return sorted((f.category, f.objects[0].kind, f.objects[0].name) for f in diagnose_cluster(cluster, model=model)[0])

    assert found(exports.load_model(cluster)) == found(exports.parse_stored_model(cluster))
    assert _open(cluster) == _whole(cluster)
