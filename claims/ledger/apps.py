"""Chargeback ledger app: after each sync that touched claims or slices, record which device
each claim holds (``claims.chargeback_data.record_holdings``)."""

from __future__ import annotations

from django.apps import AppConfig


class LedgerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "claims.ledger"
    label = "chargeback"
    verbose_name = "Chargeback ledger"
    # What the ledger reads: claims (their allocation results) and the slices' devices.
    analysis_kinds = frozenset({"ResourceClaim", "ResourceSlice"})

    def after_sync(self, cluster, read) -> list[str]:
        """Called by ``inventory.tasks.after_read_hooks`` inside the sync's transaction."""
        from claims.chargeback_data import ledger_now, record_holdings

        model = getattr(read, "model", None)
        record_holdings(cluster, ledger_now(cluster, model() if model is not None else None))
        return []
