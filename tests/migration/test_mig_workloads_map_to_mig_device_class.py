from __future__ import annotations

from migration_fixtures import CASES, device_plugin_cluster, find, load

from inventory.cel import compile_selector, evaluate_device
from inventory.normalize import normalize
from inventory.parse import parse_resource_slice
from inventory.snapshot import load_path
from migration.planner import plan_migration


def _mig_request(objects):
    plan = plan_migration(objects, "1.36.0", "1.36")
    p = next(p for p in plan.workload_plans if p.workload.ref.name == "notebook-eval")
    (req,) = p.template.obj["spec"]["spec"]["devices"]["requests"]
    return req


def test_mig_request_uses_mig_device_class_and_a_profile_selector_that_compiles():
    req = _mig_request(device_plugin_cluster())
    assert req["exactly"]["deviceClassName"] == "mig.nvidia.com"
    (sel,) = req["exactly"]["selectors"]
    assert sel["cel"]["expression"] == "device.attributes['gpu.nvidia.com'].profile == '1g.18gb'"
    compile_selector(sel["cel"]["expression"])


def test_profile_selector_matches_real_mig_devices_of_that_profile_only():
    slices = [parse_resource_slice(normalize(o)) for o in load_path(CASES / "constraint-unsatisfiable-parentuuid" / "cluster.yaml").objects
              if o["kind"] == "ResourceSlice"]
    devices = [d for s in slices for d in s.devices]
    migs = [d for d in devices if d.type == "mig" and d.profile]
    assert migs
    profile = migs[0].profile
    objects = load("workloads/workloads.yaml")
    job = find(objects, "Job", "notebook-eval")
    limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    limits[f"nvidia.com/mig-{profile}"] = limits.pop("nvidia.com/mig-1g.18gb")
    exprs = [s["cel"]["expression"] for s in _mig_request(objects)["exactly"]["selectors"]]
    for d in devices:
        assert evaluate_device(d, exprs).matched == (d.type == "mig" and d.profile == profile)


def test_unrecognised_mig_resource_name_is_a_plan_error():
    objects = load("workloads/workloads.yaml")
    job = find(objects, "Job", "notebook-eval")
    limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    limits["nvidia.com/mig-1g.18gb' || true || '"] = limits.pop("nvidia.com/mig-1g.18gb")
    plan = plan_migration(objects, "1.36.0", "1.36")
    assert any("notebook-eval" in e and "MIG profile" in e for e in plan.errors)
    assert not any(g.source and g.source.name == "notebook-eval" for g in plan.generated)
