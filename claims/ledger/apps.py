"""Chargeback ledger app: after each sync that touched claims or slices, record which device
each claim holds (``claims.chargeback_data.record_holdings``), from what the sync changed."""

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
        """Called by ``inventory.runs.after_read_hooks`` inside the sync's transaction. Only
        the claims the sync's change set names (and those on its changed slices' devices)
        open or close rows; every claim when the analyses are forced, the change set is
        incomplete or the ledger was never recorded (``ledger_claims_for``)."""
        from claims.chargeback_data import ledger_claims_for, ledger_now, record_holdings

        model_of = getattr(read, "model", None)
        model = model_of() if model_of is not None else None
        record_holdings(cluster, ledger_now(cluster, model), ledger_claims_for(cluster, read, model))
        return []
