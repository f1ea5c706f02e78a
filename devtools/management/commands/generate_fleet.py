"""``manage.py generate_fleet``: write a generated GPU fleet as one ``kind: List`` file."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError

from devtools.fleet import FLEET_EPOCH, generate_fleet


class Command(BaseCommand):
    help = "Generate N GPU nodes with slices, claims, pods and events (deterministic per seed); JSON or YAML by suffix."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, required=True, help="number of GPU nodes")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--now", default="", help=f"snapshot moment, ISO 8601 with zone (default {FLEET_EPOCH.isoformat()})")
        parser.add_argument("--out", required=True, metavar="PATH", help="output file (.json, or .yaml/.yml for YAML)")

    def handle(self, *args, **opts):
        now = FLEET_EPOCH
        if opts["now"]:
            try:
                now = datetime.fromisoformat(opts["now"].replace("Z", "+00:00"))
            except ValueError as exc:
                raise CommandError(f"--now: {exc}") from exc
            if now.tzinfo is None:
                raise CommandError("--now needs a time zone, e.g. 2026-11-12T16:00:00Z")
        try:
            objects = generate_fleet(opts["nodes"], seed=opts["seed"], now=now)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        doc = {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}
        out = Path(opts["out"])
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix in (".yaml", ".yml"):
            text = yaml.safe_dump(doc, sort_keys=True, default_flow_style=False)
        else:
            text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        out.write_text(text, encoding="utf-8")
        counts = Counter(str(o.get("kind")) for o in objects)
        self.stdout.write(f"wrote {out}: {len(objects)} objects, {out.stat().st_size} bytes")
        for kind, n in sorted(counts.items()):
            self.stdout.write(f"  {kind:<22} {n}")
