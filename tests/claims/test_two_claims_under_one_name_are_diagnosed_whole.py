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
