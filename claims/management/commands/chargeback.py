"""``manage.py chargeback --cluster NAME [--since ISO] [--until ISO] --format json|csv``:
GPU-hours per namespace and GPU product of a stored cluster over a window, allocated and used,
priced (``claims.chargeback_data.build_report``; rule: docs/chargeback.md).

``--until`` defaults to now for a live cluster and to the snapshot's time for a snapshot
cluster; ``--since`` to 7 days before ``--until``. JSON: ``{since, until, currency, gpu_hours,
namespaces: [{namespace, team, gpu_hours, used_gpu_hours_measured, used_gpu_hours_estimated,
idle_share, cost, products: [...]}], teams, trend}``; CSV: one line per namespace and product
(``claims.chargeback.CSV_COLUMNS``). Nothing is written to the database.
"""

from __future__ import annotations

import csv
import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from claims import chargeback as cb
from claims.chargeback_data import build_report, window
from inventory.models import Cluster


class Command(BaseCommand):
    help = "GPU-hours, used GPU-hours and cost per namespace and GPU product of a stored cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, help="the stored cluster's name")
        parser.add_argument("--since", help="window start, ISO 8601 (default: 7 days before --until)")
        parser.add_argument("--until", help="window end, ISO 8601 (default: now, or a snapshot cluster's time)")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args, **opts) -> None:
        cluster = Cluster.objects.filter(name=opts["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no stored cluster named {opts['cluster']!r} (sync it first: manage.py sync_cluster)")
        try:
            since, until = window([cluster], opts.get("since"), opts.get("until"), None)
        except ValueError as exc:
            raise CommandError(f"bad window: {exc} (give ISO 8601 times like 2026-11-01T00:00:00Z)") from exc
        report, errors = build_report([cluster], since, until)
        for e in errors:
            self.stderr.write(f"Prometheus unavailable, stored values used instead: {e}")
        if opts["format"] == "csv":
            w = csv.writer(self.stdout, lineterminator="\n")
            w.writerow(cb.CSV_COLUMNS)
            for row in cb.csv_rows(report):
                w.writerow(["" if v is None else v for v in row])
            return
        self.stdout.write(json.dumps({"cluster": cluster.name, **report.as_dict()}, indent=2))
