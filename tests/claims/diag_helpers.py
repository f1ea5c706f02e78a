"""Builders for diagnosis tests: real objects from tests/fixtures, modified per test."""

from __future__ import annotations

import copy
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from claims.diagnosis import ClusterState, Thresholds, diagnose
from claims.diagnosis.findings import Finding
from claims.diagnosis.state import parse_time

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
K8S = FIXTURES / "k8s"
CASES = FIXTURES / "cases"


def load_yaml(rel: str) -> list[dict[str, Any]]:
    """Every object of a fixture file, ``kind: List`` unrolled."""
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all((FIXTURES / rel).read_text(encoding="utf-8")):
        if not isinstance(doc, dict):
            continue
        if doc.get("kind", "").endswith("List") and isinstance(doc.get("items"), list):
            out.extend(doc["items"])
        else:
            out.append(doc)
    return copy.deepcopy(out)


def of_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o.get("kind") == kind]


def h100_slices() -> list[dict[str, Any]]:
    """The two real aicr EKS gpu.nvidia.com slices (8x H100 80GB each)."""
    objs = load_yaml("k8s/resourceslices/aicr-eks-2x8-h100-gpu-and-computedomain-slices.v1.yaml")
    return [o for o in of_kind(objs, "ResourceSlice") if o["spec"]["driver"] == "gpu.nvidia.com"]


def nvidia_classes() -> list[dict[str, Any]]:
    objs = load_yaml("k8s/deviceclasses/gpu-operator-golden-dra-driver-passthrough.v1.yaml")
    return [o for o in of_kind(objs, "DeviceClass") if o["metadata"]["name"] in ("gpu.nvidia.com", "mig.nvidia.com")]


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {"kubeletVersion": "v1.36.2"}},
    }


def claim(ns: str, name: str, requests: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": ns, "name": name, "uid": f"uid-claim-{name}",
                     "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {"devices": {"requests": requests}},
        "status": {},
    }
    if "constraints" in extra:
        obj["spec"]["devices"]["constraints"] = extra.pop("constraints")
    obj["status"].update(extra.pop("status", {}))
    obj["metadata"].update(extra)
    return obj


def request(name: str, device_class: str = "gpu.nvidia.com", count: int = 1, *selectors: str) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


def allocation(pool: str, *devices: str, request_name: str = "gpu", when: str = "2026-11-20T10:00:05Z") -> dict[str, Any]:
    return {
        "allocationTimestamp": when,
        "devices": {"results": [
            {"request": request_name, "driver": "gpu.nvidia.com", "pool": pool, "device": d} for d in devices
        ]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [pool]}]}]},
    }


def pod(ns: str, name: str, claims: dict[str, str] | None = None, templates: dict[str, str] | None = None,
        node_name: str | None = None, phase: str = "Pending", **meta: Any) -> dict[str, Any]:
    refs = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    refs += [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": ns, "name": name, "uid": f"uid-pod-{name}",
                     "creationTimestamp": "2026-11-20T10:00:00Z", **meta},
        "spec": {"containers": [{"name": "c", "image": "ubuntu:24.04"}], "resourceClaims": refs},
        "status": {"phase": phase},
    }
    if node_name:
        obj["spec"]["nodeName"] = node_name
    return obj


NOW = parse_time("2026-11-20T11:00:00Z")


def run(objs: list[dict[str, Any]], prom: dict[str, str] | None = None, now: datetime | None = None,
        thresholds: Thresholds | None = None) -> list[Finding]:
    return diagnose(ClusterState.from_objects(objs, prom), now or NOW, thresholds or Thresholds())


def categories(findings: list[Finding]) -> list[str]:
    return [f.category for f in findings]


def names(f: Finding) -> set[tuple[str, str | None, str]]:
    return {(o.kind, o.namespace, o.name) for o in f.objects}


def base_cluster() -> list[dict[str, Any]]:
    """Two H100 nodes with their real slices and the real NVIDIA DeviceClasses."""
    return [node("gpu-node-1", **{"nvidia.com/gpu.present": "true"}),
            node("gpu-node-2", **{"nvidia.com/gpu.present": "true"}),
            *nvidia_classes(), *h100_slices()]
