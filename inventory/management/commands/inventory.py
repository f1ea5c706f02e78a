"""``manage.py inventory --format json [--cluster NAME]``: the inventory for scripts."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from inventory.exports import ClusterNotFound, inventory_json


class Command(BaseCommand):
    help = "Print clusters -> nodes -> devices with their holders (claim and pods) and latest DCGM values."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--cluster", default=None)

    def handle(self, *args, **opts):
        try:
            doc = inventory_json(opts["cluster"])
        except ClusterNotFound as exc:
            raise CommandError(str(exc)) from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(doc, indent=2, sort_keys=False))
            return
        for c in doc["clusters"]:
            self.stdout.write(f"cluster {c['name']} ({c['server_version'] or 'version unknown'})")
            for n in c["nodes"]:
                self.stdout.write(f"  node {n['name']}: {len(n['devices'])} devices")
                for d in n["devices"]:
                    held = d["allocated_to"]["claim"] if d["allocated_to"] else "free"
                    self.stdout.write(f"    {d['driver']}/{d['pool']}/{d['name']} {d['type']} {d['product_name'] or ''} {d['profile'] or ''} -> {held}")
