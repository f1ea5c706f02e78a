from __future__ import annotations

from migration_fixtures import device_plugin_cluster, load

from migration.generate import containers, pod_spec
from migration.planner import plan_migration


def _plan_for(name, objects=None):
    plan = plan_migration(objects or device_plugin_cluster(), "1.36.0", "1.36")
    return next(p for p in plan.workload_plans if p.workload.ref.name == name)


def _requests(template):
    return template.obj["spec"]["spec"]["devices"]["requests"]


def test_single_gpu_deployment_gets_a_plain_gpu_template():
    p = _plan_for("embedder")
    (req,) = _requests(p.template)
    assert req["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert "count" not in req["exactly"]
    spec = pod_spec(p.patched.obj)
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": p.template.obj["metadata"]["name"]}]
    (c, _), = list(containers(spec))
    assert c["resources"]["claims"] == [{"name": "gpu", "request": req["name"]}]
    assert not any(k.startswith("nvidia.com/") for k in c["resources"]["limits"])
    assert not any(k.startswith("nvidia.com/") for k in c["resources"]["requests"])
    assert c["resources"]["limits"]["cpu"] == "8"  # other resources untouched


def test_eight_gpu_statefulset_asks_for_a_count_and_init_container_shares_it():
    p = _plan_for("llm-trainer")
    (req,) = _requests(p.template)
    assert req["exactly"]["count"] == 8
    spec = pod_spec(p.patched.obj)
    claims = {c["name"]: c["resources"]["claims"] for c, _ in containers(spec)}
    assert claims["warmup"] == claims["trainer"] == [{"name": "gpu", "request": req["name"]}]


def test_two_gpu_containers_get_separate_requests():
    objects = load("workloads/workloads.yaml")
    dep = next(o for o in objects if o["metadata"]["name"] == "embedder" and o["kind"] == "Deployment")
    side = {"name": "reranker", "image": "nvcr.io/nvidia/tritonserver:25.10-py3",
            "resources": {"limits": {"nvidia.com/gpu": 1}}}
    dep["spec"]["template"]["spec"]["containers"].append(side)
    p = _plan_for("embedder", objects)
    names = [r["name"] for r in _requests(p.template)]
    assert sorted(names) == ["reranker", "server"]
    spec = pod_spec(p.patched.obj)
    assert [c["resources"]["claims"][0]["request"] for c, _ in containers(spec)] == ["server", "reranker"]


def test_bare_pod_loses_node_name_and_is_marked_for_recreation():
    p = _plan_for("debug-shell")
    assert "nodeName" not in p.patched.obj["spec"]
    assert any("recreate" in n for n in p.notes)


def test_job_is_patched_as_a_new_job():
    objects = load("workloads/workloads.yaml")
    job = next(o for o in objects if o["metadata"]["name"] == "notebook-eval")
    job["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}}
    job["spec"]["template"]["metadata"] = {"labels": {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
                                                      "app": "eval"}}
    p = _plan_for("notebook-eval", objects)
    assert "selector" not in p.patched.obj["spec"]
    assert p.patched.obj["spec"]["template"]["metadata"]["labels"] == {"app": "eval"}


def test_server_set_fields_are_dropped_from_patched_workloads():
    obj = _plan_for("embedder").patched.obj
    assert "status" not in obj
    assert not {"uid", "resourceVersion", "generation", "creationTimestamp"} & set(obj["metadata"])


def test_stopgap_renames_the_limit_to_the_device_class_extended_resource():
    p = _plan_for("embedder")
    (c, _), = list(containers(pod_spec(p.stopgap.obj)))
    assert c["resources"]["limits"]["deviceclass.resource.kubernetes.io/gpu.nvidia.com"] == 1
    assert "nvidia.com/gpu" not in c["resources"]["limits"]
    assert "resourceClaims" not in pod_spec(p.stopgap.obj)


def test_stopgap_offers_device_classes_that_keep_the_old_names():
    plan = plan_migration(device_plugin_cluster(), "1.36.0", "1.36")
    classes = {g.obj["spec"]["extendedResourceName"]: g.obj for g in plan.generated if g.purpose == "stopgap_deviceclass"}
    assert set(classes) == {"nvidia.com/gpu", "nvidia.com/mig-1g.18gb"}
    assert "_cluster" in plan.stopgap_bundles


def test_stopgap_skips_a_name_a_device_class_already_maps():
    # The real demo DeviceClass maps nvidia.com/mig-1g.12gb; make our workload ask for that.
    objects = device_plugin_cluster() + load("mig-1g-12gb.yaml")
    job = next(o for o in objects if o["metadata"]["name"] == "notebook-eval")
    limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    limits["nvidia.com/mig-1g.12gb"] = limits.pop("nvidia.com/mig-1g.18gb")
    plan = plan_migration(objects, "1.36.0", "1.36")
    names = {g.obj["spec"]["extendedResourceName"] for g in plan.generated if g.purpose == "stopgap_deviceclass"}
    assert "nvidia.com/mig-1g.12gb" not in names
    assert any(f.code == "extended_resource_already_mapped" for f in plan.findings)
