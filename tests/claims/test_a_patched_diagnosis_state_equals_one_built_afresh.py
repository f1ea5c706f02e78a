"""``ClusterState.patched`` (a worker's diagnosis state moved by one sync's change) equals the
state ``from_records`` builds from the changed model: the same objects in the same order, and
the node and uid indexes it carries over or patches, through claims, pods and Events created,
updated, deleted and re-created under their names."""

from __future__ import annotations

import copy
import random

import pytest

from claims.diagnosis.state import ClusterState
from devtools.benchfleet import generate_benchmark_fleet
from inventory.kube import identity
from inventory.model import ClusterModel
from inventory.records import parse_object


def _uid(r):
    return identity(r.kind, r.namespace or "", r.name, r.uid or "")


def _model(objects):
    m = ClusterModel()
    for o in objects:
        r = parse_object(o)
        if r is not None:
            m.put(_uid(r), r)
    return m


def _compare(patched: ClusterState, fresh: ClusterState) -> None:
    assert list(patched.claims.items()) == list(fresh.claims.items())
    assert list(patched.pods.items()) == list(fresh.pods.items())
    assert patched.events == fresh.events
    assert patched.kinds_seen == fresh.kinds_seen
    assert patched.pods_by_node == fresh.pods_by_node
    assert patched.claims_by_node == fresh.claims_by_node
    assert patched.pods_by_uid() == fresh.pods_by_uid()
    assert patched.plugin_pods_on_node("node-0000") == fresh.plugin_pods_on_node("node-0000")
    for c in fresh.claims.values():
        assert patched.pods_using_claim(c) == fresh.pods_using_claim(c), c.name
    for p in fresh.pods.values():
        assert patched.pod_claim_names(p) == fresh.pod_claim_names(p), p.name
    # A scoped diagnosis reads a few subjects in the map's order (``in_order``).
    for what, of in (("claims", fresh.claims), ("pods", fresh.pods)):
        keys = list(of)[::3][::-1]
        assert patched.in_order(what, keys) == [of[k] for k in of if k in set(keys)], what
    about = {(e.involved_kind, e.involved_name) for e in fresh.events[::2]}
    assert patched.events_about(about) == [e for e in fresh.events if (e.involved_kind, e.involved_name) in about]


def _raw_changes(objects, rng, n):
    """``n`` changes to distinct claims, pods and Events of ``objects`` (None: deleted):
    (kind of change, index)."""
    idx = [i for i, o in enumerate(objects) if o is not None and o["kind"] in ("ResourceClaim", "Pod", "Event")
           and o["metadata"].get("namespace") != "kube-system" and "kubelet-plugin" not in str(o["metadata"].get("labels"))]
    return [(rng.choice(["update", "delete", "recreate", "create"]), i) for i in rng.sample(idx, n)]


def test_patched_states_follow_every_kind_of_change():
    objects = generate_benchmark_fleet(2)
    rng = random.Random(7)
    model = _model(objects)
    state = ClusterState.from_records(model.all())
    for _ in range(4):  # the indexes are built on first use: build them, then patch
        _ = state.pods_by_node, state.claims_by_node, state.pods_by_uid(), state.plugin_pods_on_node("node-0000")
        _ = [state.pods_using_claim(c) for c in state.claims.values()]
        _ = state.in_order("claims", ()), state.in_order("pods", ()), state.events_about(())
    rv = 50_000_000
    for step in range(30):
        pairs = []
        for what, i in _raw_changes(objects, rng, rng.randint(1, 4)):
            o = copy.deepcopy(objects[i])
            rv += 1
            o["metadata"]["resourceVersion"] = str(rv)
            old = parse_object(objects[i])
            if what == "delete":
                held = model.records[old.kind][_uid(old)]
                model.delete(old.kind, [_uid(old)])
                pairs.append((held, None))
                objects[i] = None
                continue
            if what == "recreate":
                o["metadata"]["uid"] = f"re-{rv}"
            elif what == "create":
                o["metadata"]["uid"] = f"new-{rv}"
                o["metadata"]["name"] = f"{o['metadata']['name']}-{rv}"
            else:
                o["metadata"].setdefault("annotations", {})["step"] = str(step)
            new = parse_object(o)
            if what == "create":
                objects.append(o)
            else:
                objects[i] = o
            if what == "recreate":
                held = model.records[old.kind][_uid(old)]
                model.delete(old.kind, [_uid(old)])
                pairs.append((held, None))
            before = model.records.get(new.kind, {}).get(_uid(new))
            model.put(_uid(new), new)
            pairs.append((before, new))
        patched = state.patched(pairs)
        fresh = ClusterState.from_records(model.all())
        assert patched is not None
        _compare(patched, fresh)
        state = patched


def test_a_change_to_another_kind_is_not_patched():
    objects = generate_benchmark_fleet(1)
    model = _model(objects)
    state = ClusterState.from_records(model.all())
    node = next(r for r in model.all() if r.kind == "Node")
    assert state.patched([(node, node)]) is None


def test_which_devices_a_selector_set_picks_is_kept_through_claim_changes_only():
    """A worker's next diagnosis after a claim or pod change does not evaluate every device's
    selectors again (the devices are the same); a state built afresh starts over. Verdicts
    from the kept matches equal those of a state built afresh."""
    from claims.diagnosis.feasibility import assess_claim

    objects = generate_benchmark_fleet(2)
    model = _model(objects)
    state = ClusterState.from_records(model.all())
    claims = list(state.claims.values())
    pending = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceClaim"))
    pending["metadata"].update(name="waiting", uid="waiting-1", resourceVersion="900000001")
    pending.pop("status", None)
    record = parse_object(pending)
    first = assess_claim(state, record)
    assert first.requests and first.requests[0].matching  # the fleet's GPUs match its selectors
    assert len(state.device_matches) == 1
    kept = state.device_matches

    model.put(_uid(record), record)
    patched = state.patched([(None, record)])
    assert patched is not None and patched.device_matches is kept
    fresh = ClusterState.from_records(model.all())
    assert fresh.device_matches == {}
    for claim in (record, *claims[:3]):
        assert assess_claim(patched, claim) == assess_claim(fresh, claim), claim.name
    assert fresh.device_matches == kept  # the same matches, found again


def test_kept_matches_do_not_outlive_a_selector_refused_since():
    """A selector that ran over its step bound anywhere (another cluster's devices) is refused
    from then on; a patched state's kept matches give the verdict a fresh state gives."""
    from claims.diagnosis.feasibility import assess_claim
    from inventory import cel

    objects = generate_benchmark_fleet(2)
    model = _model(objects)
    state = ClusterState.from_records(model.all())
    pending = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceClaim"))
    pending["metadata"].update(name="waiting", uid="waiting-2", resourceVersion="900000002")
    pending.pop("status", None)
    record = parse_object(pending)
    assert assess_claim(state, record).verdict != "selector_error"
    (exprs,) = state.device_matches
    model.put(_uid(record), record)
    patched = state.patched([(None, record)])
    cel._spend(exprs[0], cel.SelectorError(f"CEL selector is too costly: {exprs[0]}"))
    try:
        fresh = ClusterState.from_records(model.all())
        assert assess_claim(fresh, record).verdict == "selector_error"
        assert assess_claim(patched, record).verdict == "selector_error"
    finally:
        cel._SPENT.pop(exprs[0], None)


@pytest.mark.parametrize("kind", ["ResourceSlice", "DeviceClass", "DeviceTaintRule"])
def test_a_change_to_what_devices_or_their_selection_are_builds_afresh(kind):
    """Only claim, pod and Event changes are patched: the kept device matches and indexes hold
    for the same devices and classes only."""
    objects = generate_benchmark_fleet(1)
    if kind == "DeviceTaintRule":
        objects.append({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
                        "metadata": {"name": "drain", "uid": "uid-drain", "resourceVersion": "1"},
                        "spec": {"deviceSelector": {"driver": "gpu.nvidia.com"},
                                 "taint": {"key": "example.com/drain", "effect": "NoSchedule"}}})
    model = _model(objects)
    state = ClusterState.from_records(model.all())
    record = next(r for r in model.all() if r.kind == kind)
    assert state.patched([(record, record)]) is None
