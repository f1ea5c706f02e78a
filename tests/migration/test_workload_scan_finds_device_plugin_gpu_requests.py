from __future__ import annotations

from migration_fixtures import device_plugin_cluster, find, load

from migration.workloads import scan_workload, scan_workloads


def _by_name(objects):
    return {w.ref.name: w for w in scan_workloads(objects)}


def test_every_controller_kind_and_the_bare_pod_are_found():
    found = _by_name(device_plugin_cluster())
    assert {(w.ref.kind, w.ref.name) for w in found.values()} == {
        ("Deployment", "embedder"),
        ("StatefulSet", "llm-trainer"),
        ("Job", "notebook-eval"),
        ("CronJob", "nightly-reindex"),
        ("Pod", "debug-shell"),
    }


def test_pod_owned_by_a_replicaset_is_not_bare():
    objects = device_plugin_cluster()
    pod = find(objects, "Pod", "embedder-7c9f8d6b5-x2klq")
    assert scan_workload(pod) is not None  # it does ask for a GPU ...
    assert pod["metadata"]["name"] not in _by_name(objects)  # ... but its Deployment is the workload


def test_job_created_by_a_cronjob_is_counted_through_the_cronjob():
    names = _by_name(device_plugin_cluster())
    assert "nightly-reindex-29380920" not in names
    assert "nightly-reindex" in names


def test_multi_gpu_request_and_init_container_are_read():
    trainer = _by_name(device_plugin_cluster())["llm-trainer"]
    assert [(r.container, r.init, r.resource, r.count) for r in trainer.requests] == [
        ("warmup", True, "nvidia.com/gpu", 8),
        ("trainer", False, "nvidia.com/gpu", 8),
    ]
    # The pod holds max(init, sum(app)) devices, as the device plugin accounts them.
    assert trainer.total_gpus == 8
    assert trainer.pinned_products == ("NVIDIA-H200-NVL",)


def test_mig_resource_gives_its_profile():
    job = _by_name(device_plugin_cluster())["notebook-eval"]
    (req,) = job.requests
    assert req.is_mig and req.profile == "1g.18gb" and req.count == 1


def test_node_affinity_on_the_product_label_is_read_as_a_pin():
    chat = _by_name(load("workloads/priority.yaml"))["chat-api"]
    assert chat.pinned_products == ("NVIDIA-H200-NVL",)
    assert chat.priority_class_name == "inference-critical"


def test_workloads_already_on_claims_are_found_but_need_no_translation():
    found = scan_workloads(load("gpu-test1.yaml"))
    assert found and all(w.uses_dra and not w.uses_device_plugin for w in found)


def test_cpu_only_pods_are_not_workloads():
    assert "web-frontend-6d8f7b9c4-q8wzt" not in _by_name(device_plugin_cluster())


def test_fractional_gpu_count_is_an_error_not_a_guess():
    objects = load("workloads/workloads.yaml")
    pod = find(objects, "Pod", "debug-shell")
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "500m"
    (req,) = scan_workload(pod).requests
    assert req.error and "500m" in req.error
