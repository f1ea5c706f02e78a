"""The pods a read skips by their text (no GPU, no claim) are decided once per uid and
resourceVersion, and the decisions are kept in the database: a fresh process (a command)
re-syncing the same cluster searches no skipped pod's text again, a changed pod is decided
again, and decisions made by other deciding code are not reused. Fleet: the benchmark's,
whose 20 non-GPU pods per node carry every field of a real pod."""

from __future__ import annotations

import dataclasses
import json

import pytest

from devtools.benchfleet import generate_benchmark_fleet
from inventory import kinds, reconcile
from inventory.models import Cluster, KeptChunk, SourceKind
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster

pytestmark = pytest.mark.django_db


def _write(path, items):
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _counting_keep(monkeypatch) -> list[bytes]:
    calls: list[bytes] = []
    spec = kinds.BY_KIND["Pod"]

    def keep(raw, namespace=None):
        calls.append(raw)
        return spec.keep(raw, namespace=namespace)

    monkeypatch.setitem(kinds.BY_KIND, "Pod", dataclasses.replace(spec, keep=keep))
    return calls


def _sync(cluster, path):
    run = sync_cluster(cluster, SnapshotSource(path))
    assert run.status == "ok", run.error
    return run


def test_a_fresh_process_searches_no_skipped_pod_again(tmp_path, monkeypatch):
    items = generate_benchmark_fleet(2)
    path = _write(tmp_path / "fleet.json", items)
    cluster = Cluster.objects.create(name="skips", source_kind=SourceKind.SNAPSHOT, snapshot_path=str(path))
    first = _sync(cluster, path)
    skipped = first.counts["skipped"]["Pod"]
    assert skipped == 28  # per node the 14 pods that use no GPU (the GPU Operator's operands are kept)
    assert KeptChunk.objects.filter(cluster=cluster, part="skipped").count() == 1

    reconcile._SKIPPED.clear()  # a new process: nothing held
    calls = _counting_keep(monkeypatch)
    again = _sync(cluster, path)
    assert again.counts["skipped"]["Pod"] == skipped
    assert calls == []

    # One skipped pod changed (a new resourceVersion): that one is decided again, and stays skipped.
    pod = next(o for o in items if o["kind"] == "Pod" and o["metadata"]["namespace"] == "kube-system"
               and "kube-proxy" in o["metadata"]["name"])
    pod["metadata"]["resourceVersion"] = "987654321"
    _write(path, items)
    reconcile._SKIPPED.clear()
    assert _sync(cluster, path).counts["skipped"]["Pod"] == skipped
    assert len(calls) == 1 and b"987654321" in calls[0]


def test_decisions_of_other_deciding_code_are_not_reused(tmp_path, monkeypatch):
    path = _write(tmp_path / "fleet.json", generate_benchmark_fleet(1))
    cluster = Cluster.objects.create(name="skips", source_kind=SourceKind.SNAPSHOT, snapshot_path=str(path))
    skipped = _sync(cluster, path).counts["skipped"]["Pod"]
    KeptChunk.objects.filter(cluster=cluster, part="skipped").update(fingerprint="other code")
    reconcile._SKIPPED.clear()
    calls = _counting_keep(monkeypatch)
    assert _sync(cluster, path).counts["skipped"]["Pod"] == skipped
    assert len(calls) == skipped
