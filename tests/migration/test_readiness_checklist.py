from __future__ import annotations

from datetime import UTC, datetime, timedelta

from migration_fixtures import find, load

from migration.readiness import ITEMS, Attestation, evaluate_readiness

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _production_like():
    return load(
        "nvidia_v1alpha1_gpucluster.yaml",
        "nvidia_v1alpha1_nvidiadriver.yaml",
        "default-mig-parted-config.configmap.yaml",
        "workloads/nodes-mixed.yaml",
        "workloads/workloads.yaml",
        "workloads/operator.yaml",
        "workloads/prometheusrule-gpu.yaml",
        "workloads/kueue-no-mappings.yaml",
    )


def _status(objects, **kw):
    r = evaluate_readiness(objects, NOW, **kw)
    return {i.id: i.status for i in r.items}, r


def test_items_have_stable_ids_in_checklist_order():
    _, r = _status(_production_like())
    assert [i.id for i in r.items] == [i for i, _ in ITEMS] == [
        "allocation_path", "operator_pinned", "gpu_nodes_tainted", "mig_geometry_declared",
        "gpu_node_pool", "dcgm_alerts", "queueing", "evidence",
    ]


def test_production_like_cluster_passes_what_it_shows():
    status, r = _status(_production_like())
    assert status == {
        "allocation_path": "pass", "operator_pinned": "pass", "gpu_nodes_tainted": "pass",
        "mig_geometry_declared": "pass", "gpu_node_pool": "pass", "dcgm_alerts": "pass",
        "queueing": "pass", "evidence": "unknown",
    }
    assert (r.passed, r.total, r.score) == (7, 8, 88)
    assert r.item("evidence").next_step


def test_evidence_attestation_completes_the_checklist():
    att = Attestation("evidence", "sre@example.com", NOW - timedelta(days=3), "https://git.example.com/infra/commit/abc123",
                      NOW + timedelta(days=90))
    status, r = _status(_production_like(), attestations=[att])
    assert status["evidence"] == "attested"
    assert r.score == 100 and r.stage == "production"
    assert r.item("evidence").attestation == att


def test_expired_attestation_does_not_count():
    att = Attestation("evidence", "sre@example.com", NOW - timedelta(days=200), "https://runbooks.example.com/gpu-node",
                      NOW - timedelta(days=1))
    status, r = _status(_production_like(), attestations=[att])
    assert status["evidence"] == "unknown"
    assert any("not valid" in line for line in r.item("evidence").evidence)


def test_attestation_dated_in_the_future_does_not_count():
    att = Attestation("evidence", "sre@example.com", NOW + timedelta(days=1), "https://x.example.com/1")
    assert _status(_production_like(), attestations=[att])[0]["evidence"] == "unknown"


def test_attestation_never_overrides_an_observed_failure():
    objects = _production_like() + load("v1_clusterpolicy.yaml")
    att = Attestation("allocation_path", "lead", NOW - timedelta(days=1), "https://wiki.example.com/gpu")
    assert _status(objects, attestations=[att])[0]["allocation_path"] == "fail"


def test_latest_image_tag_fails_pinning():
    objects = _production_like()
    find(objects, "GPUCluster", "gpu-cluster")["spec"]["dcgmExporter"]["version"] = "latest"
    status, r = _status(objects)
    assert status["operator_pinned"] == "fail"
    assert any("dcgmExporter" in line for line in r.item("operator_pinned").evidence)


def test_untagged_operator_image_fails_pinning():
    objects = _production_like()
    find(objects, "Deployment", "gpu-operator")["spec"]["template"]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/gpu-operator"
    assert _status(objects)[0]["operator_pinned"] == "fail"


def test_untainted_gpu_node_fails():
    objects = _production_like()
    find(objects, "Node", "gpu-node-02")["spec"].pop("taints")
    status, r = _status(objects)
    assert status["gpu_nodes_tainted"] == "fail"
    assert any("gpu-node-02" in line for line in r.item("gpu_nodes_tainted").evidence)


def test_ordinary_pod_on_a_gpu_node_fails_taints():
    objects = _production_like()
    find(objects, "Pod", "web-frontend-6d8f7b9c4-q8wzt")["spec"]["nodeName"] = "gpu-node-01"
    assert _status(objects)[0]["gpu_nodes_tainted"] == "fail"


def test_daemonset_pods_on_gpu_nodes_are_not_ordinary_workloads():
    assert _status(_production_like())[0]["gpu_nodes_tainted"] == "pass"  # dcgm-exporter pod on gpu-node-02


def test_mig_layout_stuck_pending_fails():
    objects = _production_like()
    find(objects, "Node", "gpu-node-03")["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending"
    assert _status(objects)[0]["mig_geometry_declared"] == "fail"


def test_mig_label_not_defined_in_the_configmap_fails():
    objects = _production_like()
    find(objects, "Node", "gpu-node-03")["metadata"]["labels"]["nvidia.com/mig.config"] = "hand-made-layout"
    assert _status(objects)[0]["mig_geometry_declared"] == "fail"


def test_mig_capable_node_without_label_fails():
    objects = _production_like()
    find(objects, "Node", "gpu-node-01")["metadata"]["labels"].pop("nvidia.com/mig.config")
    assert _status(objects)[0]["mig_geometry_declared"] == "fail"


def test_gpu_and_cpu_nodes_in_one_pool_fail():
    objects = _production_like()
    for n in (o for o in objects if o["kind"] == "Node"):
        n["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] = "everything"
    assert _status(objects)[0]["gpu_node_pool"] == "fail"


def test_gpu_nodes_without_pool_labels_fail():
    objects = _production_like()
    for n in (o for o in objects if o["kind"] == "Node"):
        n["metadata"]["labels"].pop("eks.amazonaws.com/nodegroup")
        n["metadata"]["labels"].pop("node.kubernetes.io/instance-type")
    assert _status(objects)[0]["gpu_node_pool"] == "fail"


def test_missing_xid_alert_fails_dcgm():
    objects = _production_like()
    rule = find(objects, "PrometheusRule", "gpu-alerts")
    rule["spec"]["groups"][0]["rules"] = [r for r in rule["spec"]["groups"][0]["rules"] if "XID" not in r["expr"]]
    status, r = _status(objects)
    assert status["dcgm_alerts"] == "fail"
    assert any("DCGM_FI_DEV_XID_ERRORS" in line for line in r.item("dcgm_alerts").evidence)


def test_rules_from_the_prometheus_api_count():
    objects = [o for o in _production_like() if o["kind"] != "PrometheusRule"]
    assert _status(objects)[0]["dcgm_alerts"] == "fail"
    rules = [{"name": "t", "query": "DCGM_FI_DEV_GPU_TEMP > 85", "type": "alerting"},
             {"name": "x", "query": "increase(DCGM_FI_DEV_XID_ERRORS[5m]) > 0", "type": "alerting"},
             {"name": "u", "query": "DCGM_FI_DEV_GPU_UTIL < 5", "type": "alerting"}]
    assert _status(objects, prometheus_rules=rules)[0]["dcgm_alerts"] == "pass"


def test_dcgm_exporter_not_ready_fails_even_with_rules():
    objects = [o for o in _production_like() if not (o["kind"] == "Pod" and "dcgm" in o["metadata"]["name"])]
    find(objects, "DaemonSet", "nvidia-dcgm-exporter")["status"]["numberReady"] = 0
    assert _status(objects)[0]["dcgm_alerts"] == "fail"


def test_no_queueing_layer_fails():
    objects = [o for o in _production_like() if "kueue" not in o.get("apiVersion", "")]
    assert _status(objects)[0]["queueing"] == "fail"


def test_mixed_driver_versions_in_a_pool_fail_evidence():
    objects = _production_like()
    find(objects, "Node", "gpu-node-03")["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "575.57.08"
    status, r = _status(objects)
    assert status["evidence"] == "fail"
    assert any("gpu-h200nvl" in line and "mixed" in line for line in r.item("evidence").evidence)


def test_cluster_with_neither_operator_resource_is_unknown_then_attestable():
    objects = load("workloads/nodes-mixed.yaml")
    for n in objects:
        n["status"]["allocatable"] = {k: v for k, v in n["status"]["allocatable"].items() if not k.startswith("nvidia.com/")}
    assert _status(objects)[0]["allocation_path"] == "unknown"
    att = Attestation("allocation_path", "lead", NOW - timedelta(hours=1), "https://wiki.example.com/gpu-path")
    assert _status(objects, attestations=[att])[0]["allocation_path"] == "attested"


def test_proof_of_concept_stage():
    status, r = _status(load("v1_clusterpolicy.yaml"))
    assert status["allocation_path"] == "pass"
    assert r.stage == "proof of concept"


def test_node_served_by_device_plugin_and_dra_driver_fails_allocation_path():
    objects = load("workloads/nodes-mixed.yaml")
    assert _status(objects)[0]["allocation_path"] == "pass"  # allocatable nvidia.com/gpu: device plugin only
    objects.append({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "gpu-node-02-gpu.nvidia.com-x1"},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-node-02",
                 "pool": {"name": "gpu-node-02", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}]},
    })
    status, r = _status(objects)
    assert status["allocation_path"] == "fail"
    assert any("gpu-node-02" in line for line in r.item("allocation_path").evidence)


def test_a_node_publishing_mig_instances_without_any_mig_label_fails():
    """The case's real node publishes static MIG instances; with every nvidia.com/mig* label
    taken off, nothing declares its layout: a fail naming the instances, not a pass for "no
    MIG-capable GPU nodes"."""
    import yaml

    from tests.conftest import CASES

    docs = [d for d in yaml.safe_load_all((CASES / "constraint-unsatisfiable-parentuuid" / "cluster.yaml").read_text()) if d]
    node = next(o for o in docs if o["kind"] == "Node")
    labels = node["metadata"]["labels"]
    for k in [k for k in labels if k.startswith("nvidia.com/mig")]:
        del labels[k]
    status, r = _status(docs)
    assert status["mig_geometry_declared"] == "fail"
    migs = sum(1 for s in docs if s["kind"] == "ResourceSlice" for d in s["spec"]["devices"]
               if (d.get("attributes") or {}).get("type", {}).get("string") == "mig")
    assert migs and any(f"publishes {migs} MIG instance(s)" in e for e in r.item("mig_geometry_declared").evidence)


def _mig_case():
    import yaml

    from tests.conftest import CASES

    docs = [d for d in yaml.safe_load_all((CASES / "constraint-unsatisfiable-parentuuid" / "cluster.yaml").read_text()) if d]
    node = next(o for o in docs if o["kind"] == "Node")
    slc = next(o for o in docs if o["kind"] == "ResourceSlice")
    migs = sum(1 for d in slc["spec"]["devices"] if (d.get("attributes") or {}).get("type", {}).get("string") == "mig")
    return docs, node, slc, migs


def test_a_layout_declared_off_while_mig_instances_are_published_fails():
    docs, node, _, migs = _mig_case()
    node["metadata"]["labels"]["nvidia.com/mig.config"] = "all-disabled"
    status, r = _status(docs)
    assert status["mig_geometry_declared"] == "fail"
    assert any(f"mig.config=all-disabled but publishes {migs} MIG instance(s)" in e for e in r.item("mig_geometry_declared").evidence)


def test_mig_instances_only_an_older_pool_generation_lists_are_not_published():
    """The node's pool was published again at a newer generation with its GPUs whole (MIG
    turned off), the old slice still listed: no MIG instance is published, so no label is owed."""
    import copy

    docs, node, slc, _ = _mig_case()
    for k in [k for k in node["metadata"]["labels"] if k.startswith("nvidia.com/mig")]:
        del node["metadata"]["labels"][k]
    whole = copy.deepcopy(slc)
    whole["metadata"]["name"] += "-g2"
    whole["metadata"]["uid"] = whole["metadata"]["uid"][:-2] + "g2"
    whole["spec"]["pool"]["generation"] += 1
    whole["spec"]["devices"] = [d for d in whole["spec"]["devices"] if (d.get("attributes") or {}).get("type", {}).get("string") != "mig"]
    assert whole["spec"]["devices"]
    status, r = _status([*docs, whole])
    assert status["mig_geometry_declared"] == "pass", r.item("mig_geometry_declared").evidence
