"""A claim written again with nothing its record keeps changed (an annotation bumped, a new
resourceVersion alone) is no one's subject: the scoped diagnosis leaves its findings as they
stand (the same rows, still open) instead of deriving them again, and they still agree with a
diagnosis of the whole cluster. A change its record does keep brings it back into the scope."""

from __future__ import annotations

import copy

from tests.claims.test_scoped_diagnosis_equals_a_whole_cluster_one import _open, _whole
from tests.conftest import write_list


def test_an_annotation_alone_leaves_a_claims_findings_standing(tmp_path, sync_snapshot, monkeypatch):
    import claims.store as store
    from claims.models import Finding
    from devtools.benchfleet import generate_benchmark_fleet
    from inventory.models import Cluster

    scopes = []
    real = store.run_diagnosis

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        scopes.append(result.scope)
        return result

    monkeypatch.setattr(store, "run_diagnosis", spy)
    objects = generate_benchmark_fleet(3)
    assert sync_snapshot(write_list(tmp_path / "base.json", objects), "fleet").status == "ok"
    cluster = Cluster.objects.get(name="fleet")
    open_rows = Finding.objects.filter(cluster=cluster, resolved_at__isnull=True, kind="ResourceClaim")
    held = {(f.namespace, f.name) for f in open_rows}
    i = next(i for i, o in enumerate(objects) if o["kind"] == "ResourceClaim"
             and (o["metadata"]["namespace"], o["metadata"]["name"]) in held)
    key = (objects[i]["metadata"]["namespace"], objects[i]["metadata"]["name"])
    before = sorted(open_rows.filter(namespace=key[0], name=key[1]).values_list("pk", "last_seen"))

    annotated = copy.deepcopy(objects)
    meta = annotated[i]["metadata"]
    meta.setdefault("annotations", {})["example.com/touched"] = "1"
    meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 100_000)
    run = sync_snapshot(write_list(tmp_path / "annotated.json", annotated), "fleet")
    assert run.status == "ok" and run.counts["ResourceClaim"]["updated"] == 1
    assert scopes[-1] is not None and key not in scopes[-1].claims
    assert sorted(open_rows.filter(namespace=key[0], name=key[1]).values_list("pk", "last_seen")) == before
    assert _open(cluster) == _whole(cluster)

    deleting = copy.deepcopy(annotated)
    meta = deleting[i]["metadata"]
    meta["deletionTimestamp"] = meta["creationTimestamp"]
    meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
    assert sync_snapshot(write_list(tmp_path / "deleting.json", deleting), "fleet").status == "ok"
    assert scopes[-1] is not None and key in scopes[-1].claims
    assert _open(cluster) == _whole(cluster)


def test_a_bool_attribute_published_again_as_an_int_moves(tmp_path):
    """``True == 1``, but a CEL selector tells them apart: such a slice did change."""
    from claims.diagnosis.scope import moved
    from inventory.records import parse_object
    from inventory.snapshot import load_path
    from tests.conftest import H100_SLICES

    raw = next(o for o in load_path(H100_SLICES).objects if o["spec"].get("devices"))
    as_int = copy.deepcopy(raw)
    as_int["metadata"]["resourceVersion"] = "later"
    as_int["spec"]["devices"][0].setdefault("attributes", {})["flag"] = {"int": 1}
    raw = copy.deepcopy(raw)
    raw["spec"]["devices"][0].setdefault("attributes", {})["flag"] = {"bool": True}
    before, after = parse_object(raw), parse_object(as_int)
    assert before.devices[0].attributes == after.devices[0].attributes  # equal as Python values
    assert moved(before, after)
    same = copy.deepcopy(raw)
    same["metadata"]["resourceVersion"] = "later"
    assert not moved(before, parse_object(same))
