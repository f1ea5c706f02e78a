from __future__ import annotations

from django.apps import AppConfig

# Kinds the migration planner reads (``migration.planner``, ``workloads``, ``blockers``,
# ``selectors``): claims, their templates, taint rules and Events are not among them.
PLAN_KINDS = frozenset({
    "Node", "DeviceClass", "ResourceSlice", "Pod", "ConfigMap", "DaemonSet", "Deployment", "StatefulSet", "Job",
    "CronJob", "PriorityClass", "ClusterPolicy", "GPUCluster", "NVIDIADriver", "PrometheusRule", "ClusterQueue",
    "ResourceFlavor", "InferenceService", "ServingRuntime", "NIMService",
})  # fmt: skip
PLAN_TARGET = "1.36"  # the target the plan page opens on (``migration.views.TARGETS[0]``)


class MigrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "migration"

    @property
    def analysis_kinds(self) -> frozenset[str]:
        from .readiness import READINESS_KINDS

        return READINESS_KINDS | PLAN_KINDS

    def after_sync(self, cluster, read) -> None:
        """Inside the sync's transaction: re-evaluate the readiness checklist (a row only when
        the result changed) and re-plan the migration, each only when a kind it reads changed
        (or the cluster is analysed afresh); a failure is raised to ``after_read_hooks``."""
        from django.utils import timezone

        from .evaluation import evaluate_cluster, refresh_plans
        from .models import StoredPlan
        from .readiness import READINESS_KINDS

        now = timezone.now()
        changes = getattr(read, "changes", None)
        # Decided once, by after_read_hooks (never analysed, or a live cluster's refresh is due).
        fresh = getattr(read, "analyses_forced", True) or changes is None
        model = getattr(read, "model", None)
        if fresh or changes.touches(READINESS_KINDS):
            evaluate_cluster(cluster, now, objects=list(model().of_kinds(READINESS_KINDS)) if model is not None else None)
        if fresh or changes.touches(PLAN_KINDS) or not StoredPlan.objects.filter(cluster=cluster).exists():
            refresh_plans(cluster, PLAN_TARGET, now, model() if model is not None else None)

    def ready(self) -> None:
        from inventory.metrics import register_collector

        from . import metrics

        register_collector(metrics.collect)
