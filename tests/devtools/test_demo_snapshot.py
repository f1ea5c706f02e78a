"""The generated demo cluster: consistent objects, every stuck shape present, a joinable DCGM scrape."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.demo import build_demo, write_demo
from inventory import dcgm, parse
from inventory.snapshot import load_path, newest_timestamp
from tests.devtools.test_fleet_consistency_helpers import allocation_problems, device_index, of_kind

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo():
    return build_demo(NOW)


def _age(ts: str) -> timedelta:
    return NOW - datetime.fromisoformat(ts.replace("Z", "+00:00"))


def test_ages_are_measured_from_the_moment_given(demo):
    newest = datetime.fromisoformat(newest_timestamp(demo.objects).replace("Z", "+00:00"))
    assert NOW - timedelta(minutes=2) <= newest <= NOW
    assert build_demo(NOW + timedelta(hours=3)).objects != demo.objects


def test_small_cluster_of_customer_hardware(demo):
    nodes = of_kind(demo.objects, "Node")
    assert 8 <= len(nodes) <= 14
    products = {n["metadata"]["labels"]["nvidia.com/gpu.product"] for n in nodes}
    assert products == {"NVIDIA-H200-NVL", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"}
    profiles = {d.profile for d in device_index(demo.objects).values() if d.type == "mig"}
    assert {"1g.24gb", "1g.18gb"} <= profiles and len(profiles) >= 4


def test_allocations_and_reservations_are_consistent_except_the_orphan(demo):
    problems = allocation_problems(demo.objects)
    # Only reservations outlive their pods (the orphaned claim, the claim stuck deleting).
    assert problems and all("reservedFor uid" in p for p in problems)


def test_claims_in_all_four_states_with_long_stuck_ones(demo):
    claims = [parse.parse_resource_claim(c) for c in of_kind(demo.objects, "ResourceClaim")]
    assert {c.state for c in claims} == {"pending", "allocated", "in_use", "deleting"}
    assert any(c.state == "allocated" and _age(c.allocation_timestamp) > timedelta(minutes=5) for c in claims)
    assert any(c.state == "deleting" and c.finalizers and _age(c.deletion_timestamp) > timedelta(minutes=30) for c in claims)


def test_pods_reference_a_missing_claim_a_missing_template_and_a_missing_device_class(demo):
    objs = demo.objects
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in of_kind(objs, "ResourceClaim")}
    templates = {(t["metadata"]["namespace"], t["metadata"]["name"]): t for t in of_kind(objs, "ResourceClaimTemplate")}
    classes = {c["metadata"]["name"] for c in of_kind(objs, "DeviceClass")}
    refs = [(p["metadata"]["namespace"], r) for p in of_kind(objs, "Pod") for r in p["spec"]["resourceClaims"]]
    assert any("resourceClaimName" in r and (ns, r["resourceClaimName"]) not in claims for ns, r in refs)
    assert any("resourceClaimTemplateName" in r and (ns, r["resourceClaimTemplateName"]) not in templates for ns, r in refs)
    wanted = {req["exactly"]["deviceClassName"] for t in templates.values() for req in t["spec"]["spec"]["devices"]["requests"]}
    assert wanted - classes


def test_one_gpu_node_has_no_slice_and_one_an_empty_slice(demo):
    slices = {s["spec"]["nodeName"]: s for s in of_kind(demo.objects, "ResourceSlice")}
    gpu_nodes = [n["metadata"]["name"] for n in of_kind(demo.objects, "Node") if n["metadata"]["labels"].get("nvidia.com/gpu.present") == "true"]
    assert len([n for n in gpu_nodes if n not in slices]) == 1
    assert len([n for n in gpu_nodes if n in slices and not slices[n]["spec"]["devices"]]) == 1


def test_a_selector_asks_for_more_memory_than_any_device_has(demo):
    biggest = max(d.memory_bytes for d in device_index(demo.objects).values())
    exprs = [s["cel"]["expression"] for t in of_kind(demo.objects, "ResourceClaimTemplate")
             for r in t["spec"]["spec"]["devices"]["requests"] for s in r["exactly"].get("selectors", [])]
    asked = [e for e in exprs if "memory" in e and "200Gi" in e]
    assert asked and biggest < 200 * 1024**3


def test_dcgm_scrape_joins_to_demo_devices_with_busy_idle_and_mig_series(demo):
    samples = dcgm.parse_exposition(demo.prom["dcgm-exporter.prom"])
    devices = list(device_index(demo.objects).values())
    joined = dcgm.join_samples(samples, devices)
    assert joined.unmatched == []
    allocated = {r.device_key for c in of_kind(demo.objects, "ResourceClaim") for r in parse.parse_resource_claim(c).results}
    util = {k: t.values["DCGM_FI_DEV_GPU_UTIL"] for k, t in joined.by_device.items() if "DCGM_FI_DEV_GPU_UTIL" in t.values}
    assert any(v >= 90 and k in allocated for k, v in util.items())
    assert any(v <= 2 and k in allocated for k, v in util.items())
    assert any(v >= 90 and k not in allocated for k, v in util.items())
    mig = [s for s in samples if s.is_mig]
    assert mig and all(s.mig_profile and s.field != "DCGM_FI_DEV_GPU_UTIL" for s in mig)
    for s in samples:
        assert s.hostname and s.label("DCGM_FI_DRIVER_VERSION") and s.label("pci_bus_id")


def test_written_snapshot_loads_back_identically(tmp_path):
    snap = write_demo(tmp_path / "demo", NOW)
    load = load_path(tmp_path / "demo")
    assert load.errors == []
    assert load.objects == snap.objects
    assert set(load.prom) == set(snap.prom)
