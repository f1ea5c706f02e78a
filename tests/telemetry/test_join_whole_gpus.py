"""join_samples puts whole-GPU series on the slice device with the same UUID."""

from __future__ import annotations

import json
from dataclasses import replace

from inventory.dcgm import from_query_result, join_samples, parse_exposition
from tests.telemetry.realdata import H100_QUERY_GPU_UTIL, H100_SCRAPE


def test_the_h100_scrape_lands_on_the_eight_gpus_of_gpu_node_1_and_none_on_gpu_node_2(h100_devices):
    samples = parse_exposition(H100_SCRAPE.read_text())
    joined = join_samples(samples, h100_devices)
    gpus = [d for d in h100_devices if d.type == "gpu"]
    node1 = {d.key for d in gpus if d.node_name == "gpu-node-1"}
    node2 = {d.key for d in gpus if d.node_name == "gpu-node-2"}
    assert len(node1) == len(node2) == 8
    assert set(joined.by_device) == node1
    assert joined.unmatched == []
    assert node2 <= set(joined.devices_without_series)


def test_each_gpu_gets_the_values_of_the_series_with_its_uuid(h100_devices):
    samples = parse_exposition(H100_SCRAPE.read_text())
    joined = join_samples(samples, h100_devices)
    by_uuid = {d.uuid: d.key for d in h100_devices if d.uuid}
    for s in samples:
        assert joined.by_device[by_uuid[s.uuid]].values[s.field] == s.value


def test_gpu_0_is_attributed_to_the_vllm_pod_and_no_other_gpu_is(h100_devices):
    joined = join_samples(parse_exposition(H100_SCRAPE.read_text()), h100_devices)
    gpu0 = next(d for d in h100_devices if d.uuid == "GPU-c4529c8d-69c4-b61d-e0bc-7b2460096005")
    assert gpu0.name == "gpu-0" and gpu0.node_name == "gpu-node-1"
    assert joined.by_device[gpu0.key].pod == "dynamo-workload/vllm-agg-0-vllmdecodeworker-s65j5"
    assert joined.by_device[gpu0.key].container == "main"
    assert [k for k, t in joined.by_device.items() if t.pod] == [gpu0.key]
    assert all(t.claim is None for t in joined.by_device.values())


def test_prometheus_query_results_join_on_both_nodes_and_the_exporters_own_pod_is_no_attribution(h100_devices):
    result = json.loads(H100_QUERY_GPU_UTIL.read_text())["data"]["result"]
    samples = from_query_result(result)
    assert len(samples) == len(result) == 16
    joined = join_samples(samples, h100_devices)
    assert len(joined.by_device) == 16 and joined.unmatched == []
    attributed = {k: t.pod for k, t in joined.by_device.items() if t.pod}
    assert attributed == {
        ("gpu.nvidia.com", "gpu-node-1", "gpu-0"): "dynamo-workload/vllm-agg-0-vllmdecodeworker-s65j5"
    }
    t = joined.by_device[("gpu.nvidia.com", "gpu-node-2", "gpu-3")]
    assert t.at == "2026-03-10T03:41:29.184Z" and "DCGM_FI_DEV_GPU_UTIL" in t.values


def test_the_newest_sample_of_a_field_wins(h100_devices):
    s = parse_exposition(H100_SCRAPE.read_text())[0]
    old, new = replace(s, value=1.0, timestamp=100.0), replace(s, value=2.0, timestamp=200.0)
    for order in ([old, new], [new, old]):
        t = join_samples(order, h100_devices).by_device
        (only,) = t.values()
        assert only.values[s.field] == 2.0
        assert only.at == "1970-01-01T00:03:20.000Z"


def test_series_for_an_unknown_gpu_are_kept_as_unmatched_with_the_reason(h100_devices):
    from tests.telemetry.realdata import VGPU_PAGE

    vgpu = parse_exposition(VGPU_PAGE.read_text())
    h100 = parse_exposition(H100_SCRAPE.read_text())
    joined = join_samples(h100 + vgpu, h100_devices)
    assert len(joined.by_device) == 8
    assert [s for s, _ in joined.unmatched] == vgpu
    assert {r for _, r in joined.unmatched} == {"no device with uuid GPU-44d2411e-1604-478f-aa96-5a3c00000000"}


def test_dra_labels_name_the_claim_and_tie_a_series_to_its_device(h100_devices):
    s = parse_exposition(H100_SCRAPE.read_text())[1]  # gpu 1 on gpu-node-1
    target = next(d for d in h100_devices if d.node_name == "gpu-node-2" and d.name == "gpu-5")
    labels = dict(s.labels) | {
        "UUID": "GPU-not-in-any-slice",
        "dra_pool_name": target.pool, "dra_device_name": target.name,
        "dra_claim_name": "train-0-gpu-7tq2w", "dra_claim_namespace": "team-a",
    }
    joined = join_samples([replace(s, uuid=labels["UUID"], labels=labels)], h100_devices)
    assert list(joined.by_device) == [target.key]
    assert joined.by_device[target.key].claim == "team-a/train-0-gpu-7tq2w"
    assert joined.by_device[target.key].matched_by == "dra_device"


def test_both_hostname_spellings_join_the_same(h100_devices):
    text = H100_SCRAPE.read_text()
    a = join_samples(parse_exposition(text), h100_devices)
    b = join_samples(parse_exposition(text.replace('Hostname="', 'hostname="')), h100_devices)
    assert a == b
    assert {t.hostname for t in b.by_device.values()} == {"gpu-node-1"}
