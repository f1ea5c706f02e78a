"""``manage.py generate_fleet``: write a generated GPU fleet as one ``kind: List`` file.

``--shape mixed`` (default): ``devtools.fleet.generate_fleet``, the mixed hardware of the
customers (H200 NVL, H100, RTX PRO 6000), about two claims per node. ``--shape benchmark``:
``devtools.benchfleet.generate_benchmark_fleet``, the fleet ``manage.py benchmark`` syncs
(8 H200 NVL per node, 32 devices, 8 claims, 28 pods, 3 Events)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError

from devtools.benchfleet import generate_benchmark_fleet
from devtools.fleet import FLEET_EPOCH, generate_fleet


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


class Command(BaseCommand):
    help = "Generate N GPU nodes with slices, claims, pods and events (deterministic per seed); JSON or YAML by suffix."

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, required=True, help="number of GPU nodes")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--shape", choices=("mixed", "benchmark"), default="mixed",
                            help="mixed: the customers' hardware mix; benchmark: the benchmark's heavy H200 fleet")
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
            generate = generate_benchmark_fleet if opts["shape"] == "benchmark" else generate_fleet
            objects = generate(opts["nodes"], seed=opts["seed"], now=now)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        doc = {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}
        out = Path(opts["out"])
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix in (".yaml", ".yml"):
            # Objects the generator shares between places are written out in full each time, as
            # kubectl writes them: no YAML anchors and aliases (snapshot readers refuse those).
            text = yaml.dump(doc, Dumper=_NoAliasDumper, sort_keys=True, default_flow_style=False)
        else:
            text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        out.write_text(text, encoding="utf-8")
        counts = Counter(str(o.get("kind")) for o in objects)
        self.stdout.write(f"wrote {out}: {len(objects)} objects, {out.stat().st_size} bytes")
        for kind, n in sorted(counts.items()):
            self.stdout.write(f"  {kind:<22} {n}")
