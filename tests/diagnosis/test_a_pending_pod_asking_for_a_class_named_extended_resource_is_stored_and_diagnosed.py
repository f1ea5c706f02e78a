"""A pod asking for an extended resource under the name a DeviceClass gives it
(``spec.extendedResourceName: example.com/gpu``, the example driver's chart option) is kept by
the sync, although neither the name nor a claim says DRA before the scheduler places it; pending
past the threshold it gets its finding, as the implicit name's pod does. A pod asking only for
cpu and memory is still skipped."""

from __future__ import annotations

import json

import pytest
from dx import example_cluster, load_yaml, of_kind, scheduler_event

from inventory.kinds import asks_extended_resource

MSG = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable"


def _objects():
    objs = example_cluster()
    for o in objs:
        if o["kind"] == "DeviceClass":
            o["spec"]["extendedResourceName"] = "example.com/gpu"
    [_, pod1] = of_kind(load_yaml("k8s/dra/extended-resource-request__extended-resource-request.yaml"), "Pod")
    pod1["metadata"].update(uid="uid-pod-pod1", creationTimestamp="2026-11-20T10:00:00Z")
    pod1["status"] = {"phase": "Pending"}
    cpu_only = json.loads(json.dumps(pod1))
    cpu_only["metadata"].update(name="cpu-only", uid="uid-pod-cpu-only")
    cpu_only["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "1Gi"}}
    return [*objs, pod1, cpu_only, scheduler_event("extended-resource-request", "pod1", MSG)]


def test_the_byte_test_finds_extended_resources_and_nothing_else():
    assert asks_extended_resource(b'{"resources":{"limits":{"example.com/gpu":"1"}}}')
    assert asks_extended_resource(b'{"resources":{"limits":{"cpu":"1"},"requests":{"rdma/hca":"1"}}}')
    assert not asks_extended_resource(b'{"resources":{"limits":{"cpu":"500m","memory":"1Gi","hugepages-2Mi":"1Gi"}}}')
    assert not asks_extended_resource(b'{"annotations":{"a/b":"c"},"resources":{}}')
    assert asks_extended_resource(b'{"resources": {\n  "limits": {\n    "example.com/gpu": "1"\n  }\n}}')  # kubectl -o json
    assert not asks_extended_resource(b'{"limits": "a/b", "requests": {"cpu": "1"}}')


@pytest.mark.django_db
def test_the_class_named_extended_resource_pod_is_stored_and_gets_pending_unexplained(tmp_path, sync_snapshot):
    from claims.models import Finding
    from inventory.models import Pod

    (tmp_path / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()}))
    run = sync_snapshot(tmp_path, "extended")
    assert run.status == "ok", run.errors
    assert set(Pod.objects.filter(cluster__name="extended").values_list("name", flat=True)) == {"pod1"}
    found = Finding.objects.filter(cluster__name="extended", resolved_at__isnull=True)
    assert [(f.category, f.kind, f.name) for f in found] == [("pending_unexplained", "Pod", "pod1")]
    assert "example.com/gpu" in found[0].summary


@pytest.mark.django_db
def test_the_pod_page_names_the_extended_resource_and_the_class_serving_it(tmp_path, sync_snapshot, client_in):
    from django.urls import reverse

    (tmp_path / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()}))
    sync_snapshot(tmp_path, "extended")
    html = client_in.get(reverse("claims:pod", args=["extended", "extended-resource-request", "pod1"])).content.decode()
    assert "Extended resources served by DRA" in html and "example.com/gpu" in html
    assert reverse("inventory:deviceclass", args=["extended", "gpu.example.com"]) in html
    assert "references no ResourceClaim" not in html and "not placed yet" in html
    assert "spec.resourceClaims" not in html and "None of the referenced claims exists" not in html
