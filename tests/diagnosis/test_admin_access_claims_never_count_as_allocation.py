"""A monitoring claim (``adminAccess: true``, the example driver's real admin-access demo,
allocated every GPU with ``allocationMode: All``) holds no device: another claim for one GPU
is not ``capacity_exhausted``, and an ordinary claim on the same GPUs still is."""

from __future__ import annotations

from dx import (
    EXAMPLE_DRIVER,
    categories,
    claim_from_template,
    example_cluster,
    hold,
    load_yaml,
    of_kind,
    pending,
    request,
    run,
)

from inventory.kube import parse_time

NOW = parse_time("2026-11-20T11:00:00Z")
GPUS = [f"gpu-{i}" for i in range(8)]


def _monitoring_claim():
    demo = load_yaml("k8s/dra/admin-access__admin-access.yaml")
    template, pod0 = of_kind(demo, "ResourceClaimTemplate")[0], of_kind(demo, "Pod")[0]
    c = claim_from_template(template, pod0, "admin-gpus", "2026-11-20T09:00:00Z")
    pod0["spec"]["nodeName"] = "dra-example-driver-cluster-worker"
    pod0["status"]["phase"] = "Running"
    c["status"] = {
        "allocation": {
            "allocationTimestamp": "2026-11-20T09:00:01Z",
            "devices": {"results": [
                {"request": "admin-gpu", "driver": EXAMPLE_DRIVER, "pool": "dra-example-driver-cluster-worker",
                 "device": d, "adminAccess": True} for d in GPUS]},
        },
        "reservedFor": [{"resource": "pods", "name": "pod0", "uid": pod0["metadata"]["uid"]}],
    }
    return [template, pod0, c]


def _free(findings):
    return [r["free"] for f in findings for r in f.evidence.get("requests", [])]


def test_a_claim_for_one_gpu_beside_the_monitoring_claim_is_not_capacity_exhausted():
    f = run(example_cluster() + _monitoring_claim() + pending(request("gpu", EXAMPLE_DRIVER)), now=NOW)
    assert "capacity_exhausted" not in categories(f)
    assert categories(f) == ["pending_unexplained"]
    assert "8 free" not in f[0].summary and "feasible" in f[0].evidence["checked"][0]


def test_ordinary_claims_on_every_gpu_still_exhaust_the_capacity():
    busy = [("dra-example-driver-cluster-worker", "dra-example-driver-cluster-worker", d) for d in GPUS]
    objs = hold(example_cluster() + _monitoring_claim(), busy, driver=EXAMPLE_DRIVER)
    f = run(objs + pending(request("gpu", EXAMPLE_DRIVER)), now=NOW)
    assert categories(f) == ["capacity_exhausted"]
    assert _free(f) == [0]
