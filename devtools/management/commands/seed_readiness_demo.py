"""``python manage.py seed_readiness_demo``: the migration pages' demo data.

Run after ``load_demo``: syncs the device-plugin cluster ``legacy-dp`` from
``demo/migration/legacy-dp/`` and seeds back-dated readiness evaluations and attestations for
it and for ``demo`` (rows marked as demo and replaced on each run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from devtools.readiness_demo import LEGACY_CLUSTER, load_legacy_cluster, seed_readiness_history
from inventory.models import Cluster, SyncStatus


class Command(BaseCommand):
    help = "Sync the legacy-dp demo cluster and seed readiness history for the demo clusters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", action="append", default=None,
                            help="cluster to seed (repeatable; default: demo and legacy-dp)")

    def handle(self, *args: Any, **options: Any) -> None:
        run = load_legacy_cluster(Path(settings.BASE_DIR))
        self.stdout.write(f"cluster {LEGACY_CLUSTER}: {run.status}")
        if run.status != SyncStatus.OK:
            raise CommandError(f"{LEGACY_CLUSTER}: {run.error}")
        now = timezone.now()
        for name in options["cluster"] or ["demo", LEGACY_CLUSTER]:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                self.stdout.write(f"cluster {name}: not loaded, skipped (run load_demo first)")
                continue
            self.stdout.write(f"cluster {name}: {seed_readiness_history(cluster, now)} readiness rows seeded")
