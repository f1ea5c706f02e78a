from __future__ import annotations

from migration_fixtures import device_plugin_cluster, load

from inventory.cel import evaluate_device
from inventory.normalize import normalize
from inventory.parse import parse_resource_slice
from migration.planner import plan_migration
from migration.selectors import GIB, gpu_models, memory_threshold_gib, selector_for


def _slice(node, product, memory):
    """A v1 ResourceSlice of the NVIDIA DRA driver with one whole GPU (shape as in the cases)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu.nvidia.com-abcde"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{
                "name": "gpu-0",
                "attributes": {"type": {"string": "gpu"}, "productName": {"string": product},
                               "driverVersion": {"version": "580.105.8"}},
                "capacity": {"memory": {"value": memory}},
            }],
        },
    }


RTX = _slice("gpu-node-01", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "97887Mi")
H200 = _slice("gpu-node-02", "NVIDIA H200 NVL", "143771Mi")


def _device(s):
    return parse_resource_slice(normalize(s)).devices[0]


def test_threshold_between_rtx_pro_6000_and_h200_nvl_is_100gi():
    assert memory_threshold_gib(int(95.6 * GIB), int(140.4 * GIB)) == 100


def test_models_too_close_in_memory_get_no_threshold():
    assert memory_threshold_gib(80 * GIB, 81 * GIB) is None


def test_models_are_read_from_node_labels():
    models = {m.product: m for m in gpu_models(load("workloads/nodes-mixed.yaml"))}
    assert set(models) == {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "NVIDIA-H200-NVL"}
    assert models["NVIDIA-H200-NVL"].memory_bytes == 143771 * 2**20
    assert models["NVIDIA-H200-NVL"].nodes == ("gpu-node-02", "gpu-node-03")


def test_slices_give_the_product_name_and_memory_the_driver_reports():
    models = {m.product: m for m in gpu_models([*load("workloads/nodes-mixed.yaml"), H200])}
    assert models["NVIDIA-H200-NVL"].product_name == "NVIDIA H200 NVL"
    assert models["NVIDIA-H200-NVL"].memory_bytes == 143771 * 2**20
    assert "gpu-node-02" in models["NVIDIA-H200-NVL"].nodes


def test_pinned_workloads_get_a_memory_selector_that_picks_their_model():
    plan = plan_migration(device_plugin_cluster() + load("workloads/priority.yaml"), "1.36.0", "1.36")
    by_name = {p.workload.ref.name: p for p in plan.workload_plans}
    for name, wanted, other in (("llm-trainer", H200, RTX), ("chat-api", H200, RTX), ("nightly-reindex", RTX, H200)):
        p = by_name[name]
        (proposal,) = p.selectors
        assert proposal.applied and proposal.basis == "memory"
        (req,) = p.template.obj["spec"]["spec"]["devices"]["requests"]
        exprs = [s["cel"]["expression"] for s in req["exactly"]["selectors"]]
        assert "quantity('100Gi')" in exprs[0]
        assert evaluate_device(_device(wanted), exprs).matched
        assert not evaluate_device(_device(other), exprs).matched


def test_unpinned_workloads_stay_plain_and_options_are_offered_for_step_5():
    plan = plan_migration(device_plugin_cluster(), "1.36.0", "1.36")
    embedder = next(p for p in plan.workload_plans if p.workload.ref.name == "embedder")
    (req,) = embedder.template.obj["spec"]["spec"]["devices"]["requests"]
    assert "selectors" not in req["exactly"]
    options = {o.models[0]: o.expression for o in plan.selector_options}
    assert evaluate_device(_device(H200), [options["NVIDIA-H200-NVL"]]).matched
    assert not evaluate_device(_device(RTX), [options["NVIDIA-H200-NVL"]]).matched
    assert evaluate_device(_device(RTX), [options["NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"]]).matched


def test_one_model_cluster_needs_no_selectors():
    objects = [o for o in device_plugin_cluster()
               if not (o["kind"] == "Node" and o["metadata"]["labels"].get("nvidia.com/gpu.product") == "NVIDIA-H200-NVL")]
    plan = plan_migration(objects, "1.36.0", "1.36")
    assert plan.selector_options == ()
    assert all(p.selectors == () for p in plan.workload_plans)


def test_without_memory_the_selector_falls_back_to_product_name():
    models = gpu_models([RTX, H200])
    models = [m.__class__(m.product, m.product_name, None, m.nodes) for m in models]
    h200 = next(m for m in models if m.product == "NVIDIA-H200-NVL")
    expr, basis = selector_for([h200], models)
    assert basis == "productName"
    assert evaluate_device(_device(H200), [expr]).matched
    assert not evaluate_device(_device(RTX), [expr]).matched


def test_product_names_unsafe_in_a_cel_literal_give_no_selector():
    evil = _slice("gpu-node-09", "X' || true || '", "1Mi")
    models = [m.__class__(m.product, m.product_name, None, m.nodes) for m in gpu_models([RTX, evil])]
    bad = next(m for m in models if "true" in m.product)
    assert selector_for([bad], models) is None


def test_a_hand_set_product_label_is_an_alias_of_the_model_its_slices_publish():
    """gpu-node-02 and -03 carry the label value "H200" set by hand while their slices publish
    the driver's "NVIDIA H200 NVL": one model, not two (a selector on "H200" would match no
    device), and a workload pinned to "H200" gets the selector of that model."""
    nodes = load("workloads/nodes-mixed.yaml")
    h200_nodes = [n for n in nodes if n["metadata"]["labels"].get("nvidia.com/gpu.product") == "NVIDIA-H200-NVL"]
    assert len(h200_nodes) == 2
    for n in h200_nodes:
        n["metadata"]["labels"]["nvidia.com/gpu.product"] = "H200"
    h200_03 = _slice("gpu-node-03", "NVIDIA H200 NVL", "143771Mi")
    models = {m.product: m for m in gpu_models([*nodes, H200, h200_03, RTX])}
    assert set(models) == {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "NVIDIA-H200-NVL"}
    assert models["NVIDIA-H200-NVL"].aliases == ("H200",)
    assert models["NVIDIA-H200-NVL"].nodes == ("gpu-node-02", "gpu-node-03")

    # Only one of its nodes publishes: the label may name another model on the other node.
    models = {m.product: m for m in gpu_models([*nodes, H200, RTX])}
    assert "H200" in models and not models["NVIDIA-H200-NVL"].aliases

    objects = [o for o in device_plugin_cluster() if o["kind"] != "Node"] + nodes + [H200, h200_03, RTX]
    trainer_obj = next(o for o in objects if o["metadata"]["name"] == "llm-trainer" and o["kind"] == "StatefulSet")
    trainer_obj["spec"]["template"]["spec"]["nodeSelector"]["nvidia.com/gpu.product"] = "H200"
    plan = plan_migration(objects, "1.36.0", "1.36")
    trainer = next(p for p in plan.workload_plans if p.workload.ref.name == "llm-trainer")
    assert trainer.workload.pinned_products == ("H200",)  # pinned through the hand-set label
    (proposal,) = trainer.selectors
    assert proposal.applied and "H200" in proposal.models
    (req,) = trainer.template.obj["spec"]["spec"]["devices"]["requests"]
    (expr,) = [s["cel"]["expression"] for s in req["exactly"]["selectors"]]
    assert "'H200'" not in expr
    assert evaluate_device(_device(H200), [expr]).matched and not evaluate_device(_device(RTX), [expr]).matched
