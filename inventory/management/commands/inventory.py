"""``manage.py inventory --format json [--cluster NAME]``: the inventory for scripts.

Besides ``inventory.exports.inventory_json``, each node carries ``allocatable_now_by_profile``
(``inventory.capacity``: MIG profile or ``gpu`` -> additional devices that can be allocated
together now) and each device ``taints`` (``[{key, value, effect}]``, its slice's and
DeviceTaintRules'), ``health`` (``Healthy``, ``Unhealthy``, ``Unknown``, or null when nothing
reports it), ``holders`` (every claim holding it: several for a shared device, admin-access
ones marked) and, for a device with ``allowMultipleAllocations``, ``capacity_left``.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from inventory.exports import ClusterNotFound, inventory_json


def _holder(claim: Any, result: Any) -> dict[str, Any]:
    return {
        "claim": f"{claim.namespace}/{claim.name}",
        "request": result.request,
        "share_id": result.share_id,
        "consumed_capacity": dict(result.consumed_capacity),
        "admin_access": result.admin_access,
    }


def add_dra_state(doc: dict[str, Any]) -> dict[str, Any]:
    """Add the DRA state (``inventory.queries.dra_states``) to an ``inventory_json`` document
    in place: per node ``allocatable_now_by_profile``, per device ``taints``, ``health``,
    ``holders`` and ``capacity_left``. Devices the parse layer does not know read as
    untainted, unreported and unheld."""
    from inventory import queries
    from inventory.models import Cluster

    by_name = {c.name: c for c in Cluster.objects.filter(name__in=[c["name"] for c in doc["clusters"]])}
    for c in doc["clusters"]:
        states = queries.dra_states(by_name[c["name"]]) if c["name"] in by_name else {}
        devices = {k: s for st in states.values() for k, s in st.devices.items()}
        for n in c["nodes"]:
            st = states.get(n["name"])
            n["allocatable_now_by_profile"] = dict(st.allocatable_now_by_profile) if st else {}
            for d in n["devices"]:
                _device(d, devices.get((d["driver"], d["pool"], d["name"])))
        for d in c.get("unattached_devices", []):
            _device(d, devices.get((d["driver"], d["pool"], d["name"])))
    return doc


def _device(d: dict[str, Any], s: Any) -> None:
    d["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in s.taints] if s else []
    d["health"] = s.health if s else None
    d["holders"] = [_holder(c, r) for c, r in (*s.sharers, *s.admin)] if s else []
    if s and s.device.allow_multiple_allocations:
        d["capacity_left"] = {k: str(v) for k, v in s.capacity_left.items()}


class Command(BaseCommand):
    help = "Print clusters -> nodes -> devices with their holders (claim and pods) and latest DCGM values."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--cluster", default=None)

    def handle(self, *args, **opts):
        try:
            doc = add_dra_state(inventory_json(opts["cluster"]))
        except ClusterNotFound as exc:
            raise CommandError(str(exc)) from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(doc, indent=2, sort_keys=False))
            return
        for c in doc["clusters"]:
            self.stdout.write(f"cluster {c['name']} ({c['server_version'] or 'version unknown'})")
            for n in c["nodes"]:
                free = ", ".join(f"{p} {k}" for p, k in n["allocatable_now_by_profile"].items() if k)
                self.stdout.write(f"  node {n['name']}: {len(n['devices'])} devices" + (f"; allocatable now: {free}" if free else ""))
                for d in n["devices"]:
                    held = ", ".join(h["claim"] for h in d["holders"]) or (d["allocated_to"]["claim"] if d["allocated_to"] else "free")
                    self.stdout.write(f"    {d['driver']}/{d['pool']}/{d['name']} {d['type']} {d['product_name'] or ''} {d['profile'] or ''} -> {held}")
