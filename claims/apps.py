"""Claims app: after each sync, diagnose the stored cluster and record findings (``claims.store``)."""

from __future__ import annotations

from django.apps import AppConfig


class ClaimsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "claims"
    # The kinds the diagnosis reads (``claims.diagnosis.state``): a sync that changed none of
    # them (and brought no DCGM scrape) leaves the findings as they are.
    analysis_kinds = frozenset({
        "Node", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod", "Event",
        "DaemonSet", "DeviceTaintRule", "ClusterRole", "ConfigMap",
    })  # fmt: skip

    def after_sync(self, cluster, read) -> list[str]:
        """Called by ``inventory.runs.after_read_hooks`` inside the sync's transaction; a
        failure is raised to it (it rolls this hook back and reports it on the run). Returns
        the diagnosis rules that failed while the others' findings were recorded."""
        from claims.store import Change, sync_diagnosis

        model = getattr(read, "model", None)
        if model is None:
            return sync_diagnosis(cluster, getattr(read, "prom", None) or {})
        held = model()
        changed = None if getattr(read, "analyses_forced", True) else model.changed_records()
        return sync_diagnosis(cluster, getattr(read, "prom", None) or {}, model=held,
                              change=Change(*changed) if changed is not None else None)

    def ready(self) -> None:
        from inventory.metrics import register_collector

        from . import metrics

        register_collector(metrics.collect)
