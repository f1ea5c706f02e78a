"""A live read keeps only the Pods the dashboard uses (they reference ResourceClaims, request
nvidia.com/gpu, nvidia.com/mig-* or a DeviceClass's extended resource, or belong to the GPU
stack), tested on the raw bytes before decoding, and asks for Events about Pods, claims and
Nodes only (fieldSelector involvedObject.kind)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from inventory import jsonlist
from inventory.kinds import BY_KIND, wanted_pod
from inventory.models import KubeObject, Pod
from inventory.runs import run_sync

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _pods(path):
    out = []
    for doc in yaml.safe_load_all((FIXTURES / path).read_text()):
        for o in (doc or {}).get("items", [doc]) if doc else []:
            if o.get("kind") == "Pod":
                out.append(o)
    return out


def _raw(obj):
    return json.dumps(obj, separators=(",", ":")).encode()  # as the API server writes it


@pytest.mark.parametrize("path,name,kept", [
    ("k8s/dra/extended-resource-request__extended-resource-request.yaml", "pod0", True),  # deviceclass.resource.kubernetes.io/...
    ("k8s/dra/nvidia-extended-resources-mig-1g-12gb.yaml", "mig-1g12gb-pod", True),  # nvidia.com/mig-1g.12gb
    ("migration/workloads/workloads.yaml", "embedder-7c9f8d6b5-x2klq", True),  # nvidia.com/gpu limits
    ("migration/workloads/workloads.yaml", "web-frontend-6d8f7b9c4-q8wzt", False),  # no GPU
    ("k8s/claims-and-templates/quickstart-v1/gpu-test1.yaml", "pod1", True),  # spec.resourceClaims
])
def test_real_pods_are_kept_or_skipped_by_what_they_use(path, name, kept):
    (pod,) = [p for p in _pods(path) if p["metadata"]["name"] == name]
    assert wanted_pod(_raw(pod)) is kept
    assert wanted_pod(json.dumps(pod, indent=1).encode()) is kept  # the test reads bytes, any spacing


def test_a_toleration_of_the_gpu_taint_alone_does_not_keep_a_pod(fleet_objects):
    kube_proxy = next(o for o in fleet_objects if o["kind"] == "Pod" and o["metadata"]["name"].startswith("kube-proxy"))
    assert b'"nvidia.com/gpu"' in _raw(kube_proxy)  # it tolerates the taint...
    assert not wanted_pod(_raw(kube_proxy))  # ...and requests no GPU
    operand = next(o for o in fleet_objects if o["kind"] == "Pod" and o["metadata"]["namespace"] == "gpu-operator")
    assert wanted_pod(_raw(operand))


def test_the_decision_needs_no_decoding(monkeypatch, fleet_objects):
    pod = next(o for o in fleet_objects if o["kind"] == "Pod" and o["metadata"]["name"].startswith("kube-proxy"))
    monkeypatch.setattr(jsonlist, "decode", lambda *a, **k: pytest.fail("decoded"))
    assert BY_KIND["Pod"].keep(_raw(pod)) is False


@pytest.mark.django_db
def test_a_sync_stores_only_the_wanted_pods_and_events_about_pods_claims_and_nodes(fake, cluster, fleet_objects):
    plain_event = copy.deepcopy(next(o for o in fleet_objects if o["kind"] == "Event"))
    plain_event["metadata"].update(name="ds-event", uid="0a0a0a0a-0000-4000-8000-00000000000e")
    plain_event["involvedObject"] = {"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy"}
    fake.serve_objects([plain_event])
    run = run_sync(cluster)
    assert run.status == "ok", run.errors
    pods = [o for o in fleet_objects if o["kind"] == "Pod"]
    want = {p["metadata"]["uid"] for p in pods if wanted_pod(_raw(p))}
    assert 0 < len(want) < len(pods)
    assert set(Pod.objects.filter(cluster=cluster).values_list("uid", flat=True)) == want
    assert run.counts["skipped"]["Pod"] == len(pods) - len(want)
    selectors = {parse_qs(urlparse(r).query).get("fieldSelector", [""])[0] for r in fake.requests if urlparse(r).path == "/api/v1/events"}
    assert selectors == {"involvedObject.kind=Pod", "involvedObject.kind=ResourceClaim", "involvedObject.kind=Node"}
    events = KubeObject.objects.filter(cluster=cluster, kind="Event")
    assert not events.filter(uid=plain_event["metadata"]["uid"]).exists()
    assert events.count() == sum(1 for o in fleet_objects if o["kind"] == "Event")


def test_the_control_planes_static_pods_are_kept():
    """Their --feature-gates and images are the diagnosis's evidence (feature_gate_disabled,
    scheduler_known_bug): a live read that skipped them would judge gates it cannot see."""
    pods = [p for p in _pods("cases/scheduler-feature-gate-off/snapshot/cluster.yaml")
            if p["metadata"].get("namespace") == "kube-system"]
    scheduler = [p for p in pods if (p["metadata"].get("labels") or {}).get("component") == "kube-scheduler"
                 or p["metadata"]["name"].startswith("kube-scheduler-")]
    assert scheduler
    for pod in scheduler:
        assert wanted_pod(_raw(pod))


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_snapshot_keeps_the_same_pods_a_live_read_keeps(tmp_path, fleet_objects, sync_snapshot, fmt):
    """The same cluster gives the same stored pods whether it is read live or from a
    ``kubectl get -o json|yaml`` snapshot: pods that use no GPU are skipped before decoding."""
    from tests.conftest import write_list

    objects = copy.deepcopy(fleet_objects)
    if fmt == "json":
        path = write_list(tmp_path / "cluster.json", objects)
    else:
        path = tmp_path / "cluster.yaml"
        # kubectl writes no anchors: a JSON round trip drops the fleet's shared sub-objects.
        plain = json.loads(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        path.write_text(yaml.safe_dump(plain))
    run = sync_snapshot(path, "snap")
    assert run.status == "ok", run.errors
    pods = [o for o in fleet_objects if o["kind"] == "Pod"]
    want = {p["metadata"]["uid"] for p in pods if wanted_pod(_raw(p))}
    assert 0 < len(want) < len(pods)
    assert set(Pod.objects.filter(cluster__name="snap").values_list("uid", flat=True)) == want
    assert run.counts["skipped"]["Pod"] == len(pods) - len(want)


@pytest.mark.django_db
def test_a_worker_tests_each_version_of_a_skipped_pod_once(tmp_path, fleet_objects, sync_snapshot, monkeypatch):
    """A pod the read skipped is never stored, so the resourceVersion check cannot pass it; the
    process remembers its answer per version, and a new version is tested again."""
    from inventory import kinds
    from tests.conftest import write_list

    path = write_list(tmp_path / "cluster.json", copy.deepcopy(fleet_objects))
    sync_snapshot(path, "again")
    tested = []
    real = kinds.wanted_pod
    import dataclasses

    monkeypatch.setitem(BY_KIND, "Pod", dataclasses.replace(BY_KIND["Pod"], keep=lambda raw, **k: tested.append(raw) or real(raw, **k)))
    run = sync_snapshot(path, "again")
    skipped = run.counts["skipped"]["Pod"]
    assert skipped > 0 and tested == []  # unchanged: nothing tested again, still counted skipped
    changed = copy.deepcopy(fleet_objects)
    pod = next(o for o in changed if o["kind"] == "Pod" and not wanted_pod(_raw(o)))
    pod["metadata"]["resourceVersion"] = "990077"
    run = sync_snapshot(write_list(tmp_path / "v2.json", changed), "again")
    assert len(tested) == 1 and run.counts["skipped"]["Pod"] == skipped
    assert not Pod.objects.filter(cluster__name="again", uid=pod["metadata"]["uid"]).exists()
