"""Syncing real snapshots: the inventory the product exists to show."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from inventory.models import Device, ResourceClaim, SyncRun
from tests.conftest import FIXTURES, H100_SLICES, VKS_CLAIM, VKS_SLICES

pytestmark = pytest.mark.django_db


def _inventory(capsys, cluster=None):
    capsys.readouterr()
    args = ["inventory", "--format", "json"] + (["--cluster", cluster] if cluster else [])
    call_command(*args)
    return json.loads(capsys.readouterr().out)


def test_h100_slices_show_two_nodes_of_eight_gpus_and_compute_domain_devices(capsys):
    call_command("sync_cluster", "--snapshot", str(H100_SLICES), "--cluster", "aicr")
    doc = _inventory(capsys, "aicr")
    nodes = doc["clusters"][0]["nodes"]
    assert [n["name"] for n in nodes] == ["gpu-node-1", "gpu-node-2"]
    for node in nodes:
        gpus = [d for d in node["devices"] if d["driver"] == "gpu.nvidia.com"]
        assert len(gpus) == 8
        assert {d["product_name"] for d in gpus} == {"NVIDIA H100 80GB HBM3"}
        assert {d["memory_bytes"] for d in gpus} == {81559 * 2**20}
        assert all(d["type"] == "gpu" and d["uuid"].startswith("GPU-") for d in gpus)
        cd = [d for d in node["devices"] if d["driver"] == "compute-domain.nvidia.com"]
        assert sorted(d["name"] for d in cd) == ["channel-0", "daemon-0"]
        assert all(d["allocated_to"] is None for d in node["devices"])


def test_vks_claim_with_vks_slices_shows_the_device_held_by_the_claim_and_its_pod(capsys):
    call_command("sync_cluster", "--snapshot", str(VKS_SLICES), "--cluster", "vks")
    call_command("sync_cluster", "--snapshot", str(VKS_CLAIM), "--cluster", "vks")
    doc = _inventory(capsys, "vks")
    held = {
        (n["name"], d["name"]): d["allocated_to"] for n in doc["clusters"][0]["nodes"] for d in n["devices"]
    }
    assert held[("conformance-test-np1-qcqc8-bpdtl-wv2gs", "gpu-0")] == {
        "claim": "gpu-test1/dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk",
        "pods": ["gpu-test1/dra-gpu-example-798fccd4d-sfl2p"],
    }
    assert held[("conformance-test-np1-qcqc8-bpdtl-rcj8j", "gpu-0")] is None
    claim = ResourceClaim.objects.get()
    assert claim.state == "in_use"
    assert claim.node_name == "conformance-test-np1-qcqc8-bpdtl-wv2gs"


def test_v1beta1_claim_is_normalized_to_the_v1_request_shape(sync_snapshot):
    run = sync_snapshot(FIXTURES / "k8s/claims-with-status/dranet-pr154-resourceclaim-gpu-and-nic-with-status.v1beta1.yaml")
    assert run.status == "ok", run.error
    claim = ResourceClaim.objects.get(name="my-claim")
    assert [(r["name"], r["device_class"], r["count"]) for r in claim.requests] == [
        ("nic-request", "dranet-cloud", 1),
        ("gpu-request", "gpu.nvidia.com", 1),
    ]
    assert claim.raw["x-claimscope-served-version"] == "v1beta1"
    assert sorted(claim.results.values_list("driver", "device_name")) == [("dra.net", "eth1"), ("gpu.nvidia.com", "customgpu0")]


def test_v1alpha3_slices_with_bare_capacity_quantities_are_read(sync_snapshot):
    run = sync_snapshot(FIXTURES / "k8s/resourceslices/nvidia-imex-channels-historical.v1alpha3.yaml")
    assert run.status == "ok", run.error
    assert Device.objects.count() > 0


def test_invalid_yaml_fails_the_command_with_the_line_and_keeps_the_parsed_part():
    from django.core.management.base import CommandError

    bad = FIXTURES / "k8s/claims-with-status/k8s-issue-134789-resourceclaim-status-config-fromclass-elided-not-valid-yaml.v1.yaml"
    with pytest.raises(CommandError, match="invalid YAML at line 7"):
        call_command("sync_cluster", "--snapshot", str(bad), "--cluster", "bad")
    assert SyncRun.objects.get().status == "partial"


def test_a_file_that_is_not_yaml_at_all_fails_the_run(tmp_path):
    from django.core.management.base import CommandError

    bad = tmp_path / "garbage.yaml"
    bad.write_text("kind: [unclosed\n  - {")
    with pytest.raises(CommandError, match="invalid YAML"):
        call_command("sync_cluster", "--snapshot", str(bad), "--cluster", "bad")
    assert not SyncRun.objects.exists()  # nor its cluster: nothing was stored


def test_missing_snapshot_path_fails_with_a_clear_message(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="does not exist"):
        call_command("sync_cluster", "--snapshot", str(tmp_path / "nope.yaml"))


def test_unknown_kinds_are_skipped_and_counted(tmp_path, sync_snapshot):
    f = tmp_path / "mixed.yaml"
    f.write_text(H100_SLICES.read_text() + "\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: x}\n")
    run = sync_snapshot(f)
    assert run.status == "ok"
    assert run.counts["skipped"] == {"Secret": 1}
