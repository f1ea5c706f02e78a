"""DCGM telemetry categories: real exporter text, with labels changed per test."""

from __future__ import annotations

from pathlib import Path

from diag_helpers import CASES, FIXTURES, categories, run

from inventory.snapshot import load_path

DCGM_CASE = CASES / "dcgm-exporter-no-pod-labels-on-dra-node" / "snapshot"


def _case():
    load = load_path(DCGM_CASE)
    return load.objects, dict(load.prom)


def test_series_with_pod_labels_are_attributed():
    objs, prom = _case()
    prom = {k: v.replace('namespace="",pod=""', 'namespace="team-a",pod="train-0"') for k, v in prom.items()}
    assert "metrics_pod_attribution_missing" not in categories(run(objs, prom))


def test_empty_pod_labels_name_the_exporter_configuration():
    objs, prom = _case()
    f = next(x for x in run(objs, prom) if x.category == "metrics_pod_attribution_missing")
    assert f.evidence["gpu-operator/nvidia-dcgm-exporter-dra.KUBERNETES_ENABLE_DRA"] is False
    assert "KUBERNETES_ENABLE_DRA" in f.summary


def test_idle_gpu_without_any_series_is_metrics_missing_for_unallocated_devices():
    objs, prom = _case()
    prom = {k: "\n".join(line for line in v.splitlines() if "000000002201" not in line) + "\n"
            for k, v in prom.items()}
    f = run(objs, prom)
    assert "metrics_missing_for_unallocated_devices" in categories(f)


def test_no_scrape_means_no_telemetry_finding():
    objs, _ = _case()
    assert not {c for c in categories(run(objs, {})) if c.startswith("metric")}


def test_mig_series_without_gpu_util_is_metric_not_supported_on_mig():
    text = Path(FIXTURES / "dcgm" / "dcgm-exporter-issue-272-a100-80gb-mig-relabelled-excerpt.prom").read_text()
    f = run([], {"scrape.prom": text})
    assert categories(f) == ["metric_not_supported_on_mig"]


def test_whole_gpu_scrape_is_not_a_mig_finding():
    text = Path(FIXTURES / "dcgm" / "aicr-eks-h100-dcgm-exporter-sample.prom").read_text()
    assert "metric_not_supported_on_mig" not in categories(run([], {"s.prom": text}))
