"""parse_exposition reads real dcgm-exporter /metrics text, with or without HELP/TYPE."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from inventory.dcgm import METRICS, parse_exposition
from tests.telemetry.realdata import A30_MIG, A100_MIG_RELABELLED
from tests.telemetry.realdata import H100_SCRAPE as H100
from tests.telemetry.realdata import VGPU_PAGE as VGPU


def _reference(path):
    """(name, labels, value) of every sample, read by prometheus_client directly."""
    return [
        (s.name, dict(s.labels), s.value)
        for fam in text_string_to_metric_families(path.read_text())
        for s in fam.samples
    ]


def test_every_sample_of_the_sample_only_h100_scrape_is_read_with_its_labels():
    samples = parse_exposition(H100.read_text())
    ref = _reference(H100)
    assert [(s.field, dict(s.labels), s.value) for s in samples] == ref
    assert {s.hostname for s in samples} == {"gpu-node-1"}
    assert all(s.timestamp is None and s.gpu_instance_id is None for s in samples)


def test_gpu_0_of_the_h100_scrape_carries_the_workload_pod_and_the_others_none():
    samples = parse_exposition(H100.read_text())
    gpu0 = {(s.pod, s.namespace, s.container) for s in samples if s.gpu_index == "0"}
    others = {(s.pod, s.namespace, s.container) for s in samples if s.gpu_index != "0"}
    assert gpu0 == {("vllm-agg-0-vllmdecodeworker-s65j5", "dynamo-workload", "main")}
    assert others == {(None, None, None)}


def test_the_vgpu_page_with_help_and_type_yields_only_dcgm_series():
    samples = parse_exposition(VGPU.read_text())
    ref = [r for r in _reference(VGPU) if r[0].startswith("DCGM_")]
    assert len(samples) == len(ref) > 0
    fields = {s.field for s in samples}
    assert {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_SM_CLOCK"} <= fields
    assert {s.uuid for s in samples} == {"GPU-44d2411e-1604-478f-aa96-5a3c00000000"}


def test_non_dcgm_series_are_ignored():
    text = VGPU.read_text() + 'go_goroutines{job="x"} 12\n'
    assert len(parse_exposition(text)) == len(parse_exposition(VGPU.read_text()))


def test_a30_mig_series_carry_gpu_instance_and_profile_and_the_parent_uuid():
    samples = parse_exposition(A30_MIG.read_text())
    assert samples and all(s.is_mig for s in samples)
    assert {(s.uuid, s.gpu_instance_id, s.mig_profile) for s in samples} == {
        ("GPU-603a8873-0edd-c157-ce48-2078e8b1a935", "1", "2g.12gb")
    }
    # Empty pod labels mean "not attributed", not a pod named "".
    assert {s.pod for s in samples} == {None}
    gr = [s.value for s in samples if s.field == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"]
    assert gr == [pytest.approx(0.381124)]


def test_a_relabelled_lower_case_mig_scrape_is_normalised_to_dcgm_field_names():
    samples = parse_exposition(A100_MIG_RELABELLED.read_text())
    assert {s.field for s in samples} == {"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
    assert [(s.gpu_index, s.gpu_instance_id, s.mig_profile) for s in samples] == [
        ("0", "1", "3g.40gb"), ("0", "2", "4g.40gb"), ("1", "1", "3g.40gb")
    ]
    assert samples[0].uuid == "GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167"


def test_hostname_and_the_older_Hostname_label_give_the_same_samples():
    old = H100.read_text()
    new = old.replace('Hostname="', 'hostname="')
    assert new != old
    a, b = parse_exposition(old), parse_exposition(new)
    assert [(s.field, s.uuid, s.hostname, s.value) for s in a] == [
        (s.field, s.uuid, s.hostname, s.value) for s in b
    ]


def test_a_line_timestamp_wins_over_the_default_timestamp():
    line = H100.read_text().splitlines()[1]
    with_ts = f"{line} 1773114089184\n"
    assert parse_exposition(with_ts, timestamp=5.0)[0].timestamp == pytest.approx(1773114089.184)
    assert parse_exposition(line + "\n", timestamp=5.0)[0].timestamp == 5.0


def test_a_truncated_sample_line_raises_value_error_naming_its_line_number():
    lines = VGPU.read_text().splitlines()
    bad_at = next(i for i, line in enumerate(lines) if line.startswith("DCGM_FI_DEV_FB_USED"))
    lines[bad_at] = lines[bad_at][: len(lines[bad_at]) // 2]
    with pytest.raises(ValueError, match=rf"line {bad_at + 1}:"):
        parse_exposition("\n".join(lines))


def test_the_catalogue_states_a_label_and_unit_for_each_required_field():
    required = {
        "DCGM_FI_DEV_GPU_UTIL": "%", "DCGM_FI_DEV_FB_USED": "MiB", "DCGM_FI_DEV_FB_FREE": "MiB",
        "DCGM_FI_DEV_GPU_TEMP": "°C", "DCGM_FI_DEV_POWER_USAGE": "W", "DCGM_FI_DEV_SM_CLOCK": "MHz",
    }
    for name, unit in required.items():
        assert METRICS[name][1] == unit and METRICS[name][0]
    assert "DCGM_FI_DEV_XID_ERRORS" in METRICS and "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in METRICS
