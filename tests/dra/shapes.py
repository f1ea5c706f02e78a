"""Real-shaped DRA objects for the tests of ``tests/dra``.

- ``example(name)``: the objects of one kubernetes-sigs/dra-example-driver demo manifest
  (``tests/fixtures/k8s/dra``, byte-identical copies, see ``tests/fixtures/SOURCES.md``).
- ``dynamic_mig_node(...)``: one node's slices as NVIDIA's DRA driver publishes them under
  dynamic MIG (``../shared/docs/domain.md``: one slice holding only ``sharedCounters``, one
  counter set ``gpu-<minor>-counter-set`` per GPU with ``multiprocessors``, ``copy-engines``,
  ``decoders``, ``encoders``, ``jpeg-engines``, ``ofa-engines``, ``memory`` and
  ``memory-slice-<i>``; one devices slice per GPU: the whole GPU consuming every counter of
  its set, and every MIG placement ``gpu-<minor>-mig-<profile>-<id>-<start>`` consuming its
  profile's amounts and its memory slices). The amounts per profile are read from a real
  ``nvidia-smi mig -lgip`` of an H200 (``tests/fixtures/nvml/h200-nvidia-smi-mig-lgip.txt``),
  the placements from ``inventory/data/mig_profiles.yaml``. No real dump of such slices is
  public yet (``../shared/realdata/SOURCES.md``, Gaps), so they are built here.
- ``allocate(claim_or_template, results)``: a claim with the ``status.allocation`` the
  scheduler writes.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from inventory import mig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DRA = FIXTURES / "k8s" / "dra"
LGIP = FIXTURES / "nvml" / "h200-nvidia-smi-mig-lgip.txt"
GPU_DRIVER = "gpu.nvidia.com"
H200 = "NVIDIA H200 NVL"


def example(name: str) -> list[dict[str, Any]]:
    """Objects of one fixture file (``tests/fixtures/k8s/dra/<name>``), Namespaces left out."""
    docs = yaml.safe_load_all((DRA / name).read_text())
    return [d for d in docs if isinstance(d, dict) and d.get("kind") != "Namespace"]


def fragment(name: str) -> dict[str, Any]:
    """A published ``status:`` fragment (a map starting at ``status``)."""
    return yaml.safe_load((DRA / name).read_text())


def lgip_profiles() -> dict[str, dict[str, int | float]]:
    """profile name -> {id, memory_gib, multiprocessors, decoders, encoders, copy-engines,
    jpeg-engines, ofa-engines} from the real ``nvidia-smi mig -lgip`` table (two lines per
    profile: ``SM DEC ENC`` then ``CE JPEG OFA``)."""
    lines = LGIP.read_text().splitlines()
    head = re.compile(r"MIG (\S+)\s+(\d+)\s+\d+/\d+\s+([\d.]+)\s+\w+\s+(\d+)\s+(\d+)\s+(\d+)")
    tail = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s+\|$")
    out: dict[str, dict[str, int | float]] = {}
    for i, line in enumerate(lines):
        m = head.search(line)
        if not m:
            continue
        t = tail.match(lines[i + 1].strip())
        assert t, lines[i + 1]
        out[m.group(1)] = {
            "id": int(m.group(2)), "memory_gib": float(m.group(3)), "multiprocessors": int(m.group(4)),
            "decoders": int(m.group(5)), "encoders": int(m.group(6)), "copy-engines": int(t.group(1)),
            "jpeg-engines": int(t.group(2)), "ofa-engines": int(t.group(3)),
        }  # fmt: skip
    return out


def _mem(gib: float) -> str:
    return f"{round(gib * 1024)}Mi"


def dynamic_mig_node(node: str = "gpu-node-1", gpus: int = 4, product: str = H200) -> list[dict[str, Any]]:
    """The ResourceSlices of one dynamic-MIG node with ``gpus`` GPUs (pool = node name)."""
    model = mig.model_for(product)
    assert model is not None
    amounts = lgip_profiles()
    whole = max(amounts.values(), key=lambda a: a["multiprocessors"])  # the full-GPU profile
    counter_names = ("multiprocessors", "copy-engines", "decoders", "encoders", "jpeg-engines", "ofa-engines")
    pool = {"name": node, "generation": 1, "resourceSliceCount": gpus + 1}
    sets = []
    slices = []
    for minor in range(gpus):
        uuid = f"GPU-{minor:08d}-0000-4000-8000-00000000c0de"
        counters = {n: {"value": str(whole[n])} for n in counter_names}
        counters["memory"] = {"value": _mem(whole["memory_gib"])}
        for i in range(model.slices):
            counters[f"memory-slice-{i}"] = {"value": "1"}
        set_name = f"gpu-{minor}-counter-set"
        sets.append({"name": set_name, "counters": counters})
        common = {
            "productName": {"string": product}, "architecture": {"string": "Hopper"},
            "driverVersion": {"version": "580.95.5"}, "cudaComputeCapability": {"version": "9.0.0"},
        }  # fmt: skip
        devices = [{
            "name": f"gpu-{minor}",
            "attributes": {**common, "type": {"string": "gpu"}, "uuid": {"string": uuid}, "index": {"int": minor}, "minor": {"int": minor}},
            "capacity": {"memory": {"value": _mem(whole["memory_gib"])}},
            "consumesCounters": [{"counterSet": set_name, "counters": copy.deepcopy(counters)}],
        }]  # fmt: skip
        for p in model.profiles:
            a = amounts[p.name]
            for start in p.placements:
                span = range(start, start + p.size)
                used = {n: {"value": str(a[n])} for n in counter_names if a[n]}
                used["memory"] = {"value": _mem(float(a["memory_gib"]))}
                used.update({f"memory-slice-{i}": {"value": "1"} for i in span})
                devices.append({
                    "name": f"gpu-{minor}-mig-{p.name.replace('.', '').replace('+', '-')}-{p.id}-{start}",
                    "attributes": {
                        **common, "type": {"string": "mig"}, "profile": {"string": p.name},
                        "parentUUID": {"string": uuid}, "parentIndex": {"int": minor}, "parentMinor": {"int": minor},
                    },
                    "capacity": {"memory": {"value": _mem(float(a["memory_gib"]))}},
                    "consumesCounters": [{"counterSet": set_name, "counters": used}],
                })  # fmt: skip
        slices.append(_slice(f"{node}-{GPU_DRIVER}-gpu-{minor}", node, pool, {"devices": devices}))
    slices.insert(0, _slice(f"{node}-{GPU_DRIVER}-counters", node, pool, {"sharedCounters": sets}))
    return slices


def _slice(name: str, node: str, pool: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": "2026-11-30T10:00:00Z"},
        "spec": {"driver": GPU_DRIVER, "nodeName": node, "pool": dict(pool), **body},
    }  # fmt: skip


def allocate(obj: dict[str, Any], results: list[dict[str, Any]], name: str | None = None, node: str | None = None,
             namespace: str = "default", **status: Any) -> dict[str, Any]:
    """A ResourceClaim allocated with ``results`` (``status.allocation.devices.results``):
    ``obj`` a claim, or a ResourceClaimTemplate whose ``spec.spec`` becomes the claim's spec."""
    claim = copy.deepcopy(obj)
    if claim.get("kind") == "ResourceClaimTemplate":
        meta = claim["metadata"]
        claim = {"apiVersion": claim["apiVersion"], "kind": "ResourceClaim",
                 "metadata": {"name": name or meta["name"] + "-claim", "namespace": meta.get("namespace", namespace)},
                 "spec": claim["spec"]["spec"]}  # fmt: skip
    elif name:
        claim["metadata"]["name"] = name
    claim["metadata"].setdefault("namespace", namespace)
    claim["metadata"].setdefault("uid", "uid-claim-" + claim["metadata"]["name"])
    alloc: dict[str, Any] = {"devices": {"results": results}, "allocationTimestamp": "2026-11-30T10:05:00Z"}
    if node:
        alloc["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    claim["status"] = {"allocation": alloc, **status}
    return claim


def result(request: str, device: str, pool: str, driver: str = GPU_DRIVER, **extra: Any) -> dict[str, Any]:
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


def sync(objects: list[dict[str, Any]], path: Path, cluster: str) -> None:
    """Sync ``objects`` as one snapshot file through ``sync_cluster``. These tests read the
    inventory: an analysis that fails after the inventory is stored (the command says
    "inventory stored; ... analysis(es) failed") does not fail them; anything else does."""
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    try:
        call_command("sync_cluster", "--snapshot", str(path), "--cluster", cluster)
    except CommandError as exc:
        if not str(exc).startswith("inventory stored;"):
            raise
