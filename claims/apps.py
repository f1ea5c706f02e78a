"""Claims app: after each sync, diagnose the stored cluster and record findings (``claims.store``)."""

from __future__ import annotations

import logging

from django.apps import AppConfig

log = logging.getLogger(__name__)


class ClaimsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "claims"

    def after_sync(self, cluster, read) -> None:
        """Called by ``inventory.tasks.after_read_hooks`` after every reconcile.

        A diagnosis failure is logged, not raised: the inventory the sync just stored is
        still right, and failing the SyncRun would say otherwise.
        """
        from claims.store import sync_diagnosis

        try:
            sync_diagnosis(cluster, getattr(read, "prom", None) or {})
        except Exception:  # see docstring
            log.exception("diagnosis of cluster %s failed", cluster.name)

    def ready(self) -> None:
        from inventory.metrics import register_collector

        from . import metrics

        register_collector(metrics.collect)
