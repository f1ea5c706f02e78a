"""Consistency checks (helpers, no tests) shared by the fleet and demo tests: what a real API server guarantees."""

from __future__ import annotations

from typing import Any

from inventory import parse


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def device_index(objects: list[dict[str, Any]]) -> dict[tuple[str, str, str], parse.Device]:
    out = {}
    for s in of_kind(objects, "ResourceSlice"):
        for d in parse.parse_resource_slice(s).devices:
            assert d.key not in out, f"device {d.key} published twice"
            out[d.key] = d
    return out


def allocation_problems(objects: list[dict[str, Any]]) -> list[str]:
    """Allocation results naming unknown devices, devices allocated twice, reservedFor uids
    that are not pods, owner references that disagree with the pod's uid."""
    devices = device_index(objects)
    pods = {(p["metadata"]["namespace"], p["metadata"]["uid"]) for p in of_kind(objects, "Pod")}
    pod_uid_by_name = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"]["uid"] for p in of_kind(objects, "Pod")}
    seen: dict[tuple[str, str, str], str] = {}
    problems = []
    for obj in of_kind(objects, "ResourceClaim"):
        c = parse.parse_resource_claim(obj)
        for r in c.results:
            if r.device_key not in devices:
                problems.append(f"{c.name}: allocation names unknown device {r.device_key}")
            if r.device_key in seen:
                problems.append(f"{c.name}: device {r.device_key} already allocated to {seen[r.device_key]}")
            seen[r.device_key] = c.name
        for ref in c.reserved_for:
            if (c.namespace, ref.uid) not in pods:
                problems.append(f"{c.name}: reservedFor uid {ref.uid} is not a pod")
        owner = next((o for o in obj["metadata"].get("ownerReferences") or [] if o["kind"] == "Pod"), None)
        if owner and (c.namespace, owner["name"]) in pod_uid_by_name and pod_uid_by_name[(c.namespace, owner["name"])] != owner["uid"]:
            problems.append(f"{c.name}: ownerReference uid differs from pod {owner['name']}")
    return problems
