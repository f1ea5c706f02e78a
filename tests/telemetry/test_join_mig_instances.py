"""MIG series (GPU_I_ID set) land on the MIG device of their parent GPU, or stay unmatched
with the reason when the slice cannot tell instances apart."""

from __future__ import annotations

import copy

from inventory.dcgm import join_samples, parse_exposition
from inventory.parse import parse_resource_slice
from tests.telemetry.realdata import A30_MIG, H100_SCRAPE, MIG_CASE, resource_slice_objects

A30_UUID = "GPU-603a8873-0edd-c157-ce48-2078e8b1a935"
GR_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


def _a30_gr_line() -> str:
    return next(line for line in A30_MIG.read_text().splitlines() if line.startswith(GR_ACTIVE))


def _mig_series_on(parent: str, profile: str, extra_labels: str = "") -> list:
    """The real A30 GR_ENGINE_ACTIVE line moved onto another parent GPU and profile."""
    line = _a30_gr_line().replace(A30_UUID, parent).replace('GPU_I_PROFILE="2g.12gb"', f'GPU_I_PROFILE="{profile}"')
    if extra_labels:
        line = line.replace("} ", "," + extra_labels + "} ", 1)
    return parse_exposition(line + "\n")


def _a30_slice(placements: list[int]):
    """A real-shaped MIG slice for the A30 of the excerpt: the case's MIG device entry as
    template, with parentUUID, profile and the driver's name gpu-<minor>-mig-<profile>-<GI
    profile id>-<placement start> (2g.12gb is GI profile 5 on A30)."""
    raw = copy.deepcopy(resource_slice_objects(MIG_CASE)[0])
    template = next(d for d in raw["spec"]["devices"] if d["attributes"]["type"]["string"] == "mig")
    devices = []
    for i, start in enumerate(placements):
        d = copy.deepcopy(template)
        d["name"] = f"gpu-0-mig-2g12gb-5-{start}"
        d["attributes"]["parentUUID"]["string"] = A30_UUID
        d["attributes"]["profile"]["string"] = "2g.12gb"
        d["attributes"]["productName"]["string"] = "NVIDIA A30"
        d["attributes"]["uuid"]["string"] = f"MIG-00000000-0000-4000-9000-00000000a30{i}"
        devices.append(d)
    raw["spec"]["devices"] = devices
    return parse_resource_slice(raw).devices


def test_the_a30_mig_series_land_on_the_only_2g12gb_instance_of_their_parent():
    (dev,) = _a30_slice([0])
    samples = parse_exposition(A30_MIG.read_text())
    joined = join_samples(samples, [dev])
    assert joined.unmatched == []
    t = joined.by_device[dev.key]
    assert t.matched_by == "parent_uuid_profile"
    assert {s.field for s in samples} == set(t.values)
    assert t.values[GR_ACTIVE] == next(s.value for s in samples if s.field == GR_ACTIVE)
    # Two untimed samples of one field: the later line is the latest.
    tensor = [s.value for s in samples if s.field == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"]
    assert t.values["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"] == tensor[-1]


def test_two_instances_of_the_profile_on_the_parent_make_the_series_ambiguous():
    devs = _a30_slice([0, 2])
    samples = parse_exposition(A30_MIG.read_text())
    joined = join_samples(samples, devs)
    assert joined.by_device == {}
    assert [s for s, _ in joined.unmatched] == samples
    reason = joined.unmatched[0][1]
    assert "ambiguous" in reason and "gpu-0-mig-2g12gb-5-0" in reason and "gpu-0-mig-2g12gb-5-2" in reason


def test_a_mig_series_on_a_case_parent_with_seven_1g10gb_instances_stays_unmatched(mig_devices):
    parent = next(d.parent_uuid for d in mig_devices if d.name == "gpu-0-mig-1g10gb-19-6")
    joined = join_samples(_mig_series_on(parent, "1g.10gb"), mig_devices)
    assert joined.by_device == {}
    ((_, reason),) = joined.unmatched
    assert "7 1g.10gb instances" in reason and parent in reason


def test_dra_mig_device_uuid_picks_the_right_instance(mig_devices):
    target = next(d for d in mig_devices if d.name == "gpu-0-mig-1g10gb-19-6")
    samples = _mig_series_on(target.parent_uuid, "1g.10gb", f'dra_mig_device_uuid="{target.uuid}"')
    joined = join_samples(samples, mig_devices)
    assert list(joined.by_device) == [target.key]
    assert joined.by_device[target.key].matched_by == "dra_mig_device_uuid"


def test_dra_pool_and_device_name_pick_the_right_instance_and_name_the_claim(mig_devices):
    target = next(d for d in mig_devices if d.name == "gpu-1-mig-1g10gb-19-3")
    extra = (
        f'dra_pool_name="{target.pool}",dra_device_name="{target.name}",'
        'dra_claim_name="jupyter-mig-5f6d8c9b7-swfwg-mig-tjvlq",dra_claim_namespace="team-a"'
    )
    joined = join_samples(_mig_series_on(target.parent_uuid, "1g.10gb", extra), mig_devices)
    assert list(joined.by_device) == [target.key]
    assert joined.by_device[target.key].claim == "team-a/jupyter-mig-5f6d8c9b7-swfwg-mig-tjvlq"


def test_a_mig_series_for_a_profile_the_parent_does_not_have_is_unmatched(mig_devices):
    parent = next(d.parent_uuid for d in mig_devices if d.parent_uuid)
    joined = join_samples(_mig_series_on(parent, "3g.40gb"), mig_devices)
    ((_, reason),) = joined.unmatched
    assert reason.startswith("no MIG device with parentUUID") and "3g.40gb" in reason


def test_a_whole_gpu_series_for_a_gpu_published_only_as_mig_devices_is_unmatched(mig_devices):
    parent = next(d.parent_uuid for d in mig_devices if d.parent_uuid)
    line = H100_SCRAPE.read_text().splitlines()[1]
    uuid = line.split('UUID="')[1].split('"')[0]
    joined = join_samples(parse_exposition(line.replace(uuid, parent) + "\n"), mig_devices)
    ((_, reason),) = joined.unmatched
    assert "only as MIG devices" in reason


def test_whole_gpu_series_of_the_case_node_land_on_whole_gpus_not_on_mig_instances(mig_devices):
    whole = [d for d in mig_devices if d.type == "gpu"]
    line = H100_SCRAPE.read_text().splitlines()[1]
    uuid = line.split('UUID="')[1].split('"')[0]
    text = "".join(line.replace(uuid, d.uuid) + "\n" for d in whole)
    joined = join_samples(parse_exposition(text), mig_devices)
    assert set(joined.by_device) == {d.key for d in whole} and joined.unmatched == []
