"""A sync that changed a few claims, pods or Events diagnoses only what the change can reach
(``claims.diagnosis.scope``), and the findings it leaves open are exactly those a diagnosis of
the whole cluster gives: on every real case, for claims deleted, stuck deleting, de-allocated
and re-created under a new uid, pods gone and Events gone."""

from __future__ import annotations

import copy
import itertools

import pytest

from tests.conftest import CASES, write_list

SNAPSHOTS = sorted(p / "snapshot" for p in CASES.iterdir() if (p / "snapshot").exists())
PER_CASE = 6  # mutations per case and kind of change


def _objects(path):
    from inventory.snapshot import load_path

    objects = load_path(path).objects
    # Real dumps often carry no resourceVersion; without one every object reads as changed.
    for i, o in enumerate(objects):
        o.setdefault("metadata", {}).setdefault("resourceVersion", str(1000 + i))
    return objects


def _bump(obj, rv):
    obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return obj


def _mutations(objects):
    """(label, objects) pairs: each a copy of ``objects`` with one change no timestamp moves."""
    rv = itertools.count(9_000_001)
    idx = {k: [i for i, o in enumerate(objects) if o.get("kind") == k] for k in ("ResourceClaim", "Pod", "Event")}
    for i in idx["ResourceClaim"][:PER_CASE]:
        name = objects[i]["metadata"].get("name")
        yield f"claim {name} deleted", [o for j, o in enumerate(objects) if j != i]
        out = copy.deepcopy(objects)
        meta = out[i]["metadata"]
        meta["deletionTimestamp"] = meta.get("creationTimestamp")
        meta.setdefault("finalizers", ["resource.kubernetes.io/delete-protection"])
        _bump(out[i], next(rv))
        yield f"claim {name} deleting", out
        if (out[i].get("status") or {}).get("allocation"):
            out = copy.deepcopy(objects)
            out[i]["status"].pop("allocation", None)
            out[i]["status"].pop("reservedFor", None)
            _bump(out[i], next(rv))
            yield f"claim {name} de-allocated", out
        out = copy.deepcopy(objects)
        out[i]["metadata"]["uid"] = f"recreated-{next(rv)}"
        _bump(out[i], next(rv))
        yield f"claim {name} re-created", out
        if (objects[i].get("status") or {}).get("allocation"):
            out = copy.deepcopy(objects)
            twin = copy.deepcopy(objects[i])
            twin["metadata"].update(name=f"{name}-twin", uid=f"twin-{next(rv)}")
            out.append(_bump(twin, next(rv)))
            yield f"claim {name} allocated twice", out  # its devices now held by two claims
    for i in idx["Pod"][:PER_CASE]:
        yield f"pod {objects[i]['metadata'].get('name')} deleted", [o for j, o in enumerate(objects) if j != i]
    for i in idx["Event"][:PER_CASE]:
        yield f"event {objects[i]['metadata'].get('name')} deleted", [o for j, o in enumerate(objects) if j != i]


def _open(cluster):
    from claims.models import Finding

    return sorted(
        (f.category, f.kind, f.namespace, f.name, f.severity, f.summary, f.next_action)
        for f in Finding.objects.filter(cluster=cluster, resolved_at__isnull=True)
    )


def _whole(cluster):
    from claims.store import diagnose_cluster, fingerprint, object_uids

    findings, _ = diagnose_cluster(cluster)
    uids = object_uids(cluster, {(o.kind, o.namespace or "", o.name) for f in findings for o in f.objects})
    seen, out = set(), []
    for f in findings:
        fp = fingerprint(f, uids)
        if fp in seen:
            continue
        seen.add(fp)
        main = f.objects[0]
        out.append((f.category, main.kind, main.namespace or "", main.name, f.severity, f.summary, f.next_action))
    return sorted(out)


def _check(objects, tmp_path, sync_snapshot, monkeypatch) -> list[bool]:
    """Sync ``objects``, then each mutation and back, comparing the open findings with a
    whole-cluster diagnosis each time; returns, per diagnosis, whether it was scoped."""
    import claims.store as store
    from inventory.models import Cluster

    scoped = []
    real = store.run_diagnosis

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        scoped.append(result.scope is not None)
        return result

    monkeypatch.setattr(store, "run_diagnosis", spy)
    base = write_list(tmp_path / "base.json", objects)
    assert sync_snapshot(base, "scoped").status in ("ok", "partial")
    cluster = Cluster.objects.get(name="scoped")
    for label, changed in _mutations(objects):
        path = write_list(tmp_path / "changed.json", changed)
        run = sync_snapshot(path, "scoped")
        assert run.status in ("ok", "partial"), (label, run.error)
        cluster.refresh_from_db()
        assert _open(cluster) == _whole(cluster), label
        # And back: the scoped diagnosis of the change undone.
        sync_snapshot(base, "scoped")
        cluster.refresh_from_db()
        assert _open(cluster) == _whole(cluster), f"{label}, undone"
    return scoped


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[p.parent.name for p in SNAPSHOTS])
def test_a_scoped_diagnosis_leaves_what_a_whole_one_finds(snapshot, tmp_path, sync_snapshot, monkeypatch):
    # Some changes move a small case's newest timestamp (its clock): those are diagnosed whole.
    _check(_objects(snapshot), tmp_path, sync_snapshot, monkeypatch)


def test_on_a_fleet_changes_are_diagnosed_by_scope_and_agree_with_the_whole(tmp_path, sync_snapshot, monkeypatch):
    from devtools.benchfleet import generate_benchmark_fleet

    objects = generate_benchmark_fleet(3)
    # Every claim state and pending claims waiting on the whole fleet's capacity.
    scoped = _check(objects, tmp_path, sync_snapshot, monkeypatch)
    assert sum(scoped) >= len(scoped) // 2, scoped
