from __future__ import annotations

from django.apps import AppConfig


class MigrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "migration"

    def after_sync(self, cluster, read) -> None:
        """Re-evaluate the readiness checklist (a row only when the result changed), inside
        the sync's transaction; a failure is raised to ``after_read_hooks``, which reports it."""
        from django.utils import timezone

        from .evaluation import evaluate_cluster

        evaluate_cluster(cluster, timezone.now())

    def ready(self) -> None:
        from inventory.metrics import register_collector

        from . import metrics

        register_collector(metrics.collect)
