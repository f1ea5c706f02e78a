from __future__ import annotations

import logging

from django.apps import AppConfig

log = logging.getLogger(__name__)


class MigrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "migration"

    def after_sync(self, cluster, read) -> None:
        """Re-evaluate the readiness checklist; stores a row only when the result changed.

        A failure here is logged, never raised: the checklist must not fail the sync run.
        """
        from django.utils import timezone

        from .evaluation import evaluate_cluster

        try:
            evaluate_cluster(cluster, timezone.now())
        except Exception:  # the sync itself succeeded; keep its result
            log.exception("readiness evaluation of %s failed", cluster.name)

    def ready(self) -> None:
        from inventory.metrics import register_collector

        from . import metrics

        register_collector(metrics.collect)
