from __future__ import annotations

import kubernetes_validate
import pytest
import yaml
from migration_fixtures import device_plugin_cluster, find, load

from migration.planner import plan_migration


def _everything():
    return device_plugin_cluster() + load(
        "workloads/priority.yaml", "workloads/kserve.yaml", "workloads/control-plane.yaml"
    )


@pytest.mark.parametrize("target", ["1.34", "1.35", "1.36", "1.37"])
def test_every_generated_object_validates_for_the_target_version(target):
    plan = plan_migration(_everything(), "1.33.5", target)
    assert plan.errors == ()
    assert plan.schema_version == target
    kinds = {g.obj["kind"] for g in plan.generated}
    assert {"ResourceClaimTemplate", "Deployment", "StatefulSet", "Job", "CronJob", "Pod", "DeviceClass"} <= kinds
    for g in plan.generated:
        kubernetes_validate.validate(g.obj, target, strict=True)


def test_bundles_hold_exactly_the_validated_objects_per_namespace():
    plan = plan_migration(_everything(), "1.33.5", "1.36")
    from_bundles = []
    for ns, text in plan.bundles.items():
        docs = [d for d in yaml.safe_load_all(text) if d]
        assert {d["metadata"]["namespace"] for d in docs} == {ns}
        from_bundles.extend(docs)
    expected = [g.obj for g in plan.generated if g.purpose in ("claim_template", "workload")]
    assert sorted(map(repr, from_bundles)) == sorted(map(repr, expected))
    for d in from_bundles:
        kubernetes_validate.validate(d, "1.36", strict=True)


def test_target_newer_than_the_shipped_schemas_validates_against_the_newest():
    newest = kubernetes_validate.latest_version()
    major, minor = (int(x) for x in newest.split(".")[:2])
    plan = plan_migration(device_plugin_cluster(), None, f"{major}.{minor + 5}")
    assert plan.schema_version == f"{major}.{minor}"
    assert any(f.code == "schema_version" for f in plan.findings)


def test_an_object_that_fails_the_schema_is_a_plan_error_and_never_offered():
    objects = load("workloads/workloads.yaml")
    # A field no Kubernetes version knows: the patched Deployment cannot validate strictly.
    find(objects, "Deployment", "embedder")["spec"]["template"]["spec"]["gpuPriority"] = "high"
    plan = plan_migration(objects, "1.36.1", "1.36")
    assert any("embedder" in e and "gpuPriority" in e for e in plan.errors)
    offered = [g for g in plan.generated if g.source and g.source.name == "embedder"]
    assert offered == []
    assert "embedder" not in plan.bundles.get("team-a", "")
    # The other workloads are still planned.
    assert "notebook-eval" in plan.bundles["team-a"]


def test_target_below_1_34_is_a_plan_error():
    plan = plan_migration(device_plugin_cluster(), "1.33.5", "1.33")
    assert any("1.34" in e for e in plan.errors)


def test_unreadable_target_version_raises():
    with pytest.raises(ValueError):
        plan_migration(device_plugin_cluster(), None, "latest")


def test_a_name_or_count_the_api_server_refuses_is_a_plan_error_and_never_offered():
    """The schema checker takes any string as a name and any integer as an int64: a hand-written
    snapshot's pod named with markup, or a workload asking for 10^20 GPUs, would otherwise be
    offered as validated manifests the API server then refuses."""
    objects = load("workloads/workloads.yaml")
    find(objects, "Pod", "debug-shell")["metadata"]["name"] = "pod-<script>alert('x')</script>"
    embedder = find(objects, "Deployment", "embedder")
    for c in embedder["spec"]["template"]["spec"]["containers"]:
        for part in ("limits", "requests"):
            if "nvidia.com/gpu" in (c.get("resources") or {}).get(part, {}):
                c["resources"][part]["nvidia.com/gpu"] = 10**20
    plan = plan_migration(objects, "1.36.1", "1.36")
    assert any("<script>" in e and "not a valid Kubernetes name" in e for e in plan.errors), plan.errors
    assert any("embedder" in e and "outside int64" in e for e in plan.errors), plan.errors
    offered = {g.source.name for g in plan.generated if g.source}
    assert "embedder" not in offered and not any("<script>" in n for n in offered)
    assert "notebook-eval" in plan.bundles["team-a"]  # the others are still planned
    for text in plan.bundles.values():
        assert "<script>" not in text and "100000000000000000000" not in text


@pytest.mark.parametrize(("kind", "name", "why"), [
    ("Deployment", "Embedder_X", "DNS-1123 subdomain"),
    ("Job", "j" * 64, "at most 63 characters"),
    ("CronJob", "c" * 53, "at most 52 characters"),
])  # fmt: skip
def test_a_workload_name_the_api_server_refuses_is_a_plan_error(kind, name, why):
    objects = load("workloads/workloads.yaml")
    target = next(o for o in objects if o["kind"] == kind)
    target["metadata"]["name"] = name
    plan = plan_migration(objects, "1.36.1", "1.36")
    assert any(why in e and name[:20] in e for e in plan.errors), plan.errors
    assert not any(g.obj["metadata"]["name"] == name for g in plan.generated)
    assert name not in {g.source.name for g in plan.generated if g.source}  # neither its template


@pytest.mark.parametrize(("containers", "gpus", "why"), [
    (33, 1, "33 requests (one per GPU container), more than the 32"),
    (5, 8, "40 devices in one claim, more than the 32"),
])  # fmt: skip
def test_a_claim_over_the_dra_limits_is_a_plan_error_and_never_offered(containers, gpus, why):
    """One claim holds at most 32 requests (the API server refuses more) and is allocated at
    most 32 devices (the scheduler never allocates one asking for more): the real embedder
    Deployment grown past either is refused, not offered as validated."""
    import copy

    objects = load("workloads/workloads.yaml")
    embedder = find(objects, "Deployment", "embedder")
    spec = embedder["spec"]["template"]["spec"]
    gpu = next(c for c in spec["containers"] if "nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {}))
    spec["containers"] = []
    for i in range(containers):
        c = copy.deepcopy(gpu)
        c["name"] = f"{gpu['name']}-{i}"
        c["resources"]["limits"]["nvidia.com/gpu"] = gpus
        c["resources"].get("requests", {}).pop("nvidia.com/gpu", None)
        spec["containers"].append(c)
    plan = plan_migration(objects, "1.36.1", "1.36")
    assert any("embedder" in e and why in e for e in plan.errors), plan.errors
    # Neither its template, the workload patched to use it, nor the stopgap (the claim the
    # scheduler makes for its extended resources would be over the same limit).
    assert not [g for g in plan.generated if g.source and g.source.name == "embedder"]
    assert any("embedder" in e and "extended resources" in e and "at most 32" in e for e in plan.errors), plan.errors
    assert "notebook-eval" in plan.bundles["team-a"]  # the others are still planned

    # At the limit it is planned: 32 containers of one GPU each.
    del spec["containers"][32:]
    for c in spec["containers"]:
        c["resources"]["limits"]["nvidia.com/gpu"] = 1
    plan = plan_migration(objects, "1.36.1", "1.36")
    assert {g.purpose for g in plan.generated if g.source and g.source.name == "embedder"} == {"claim_template", "workload", "stopgap_workload"}, plan.errors
