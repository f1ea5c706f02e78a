"""Admin: clusters are managed here; sync runs are read-only history.

A Cluster names how to reach it (kubeconfig file + context, in-cluster service account or a
snapshot path); the credentials themselves stay in files or mounted Secrets, never in a row.
"""

from __future__ import annotations

from django.contrib import admin

from .models import Cluster, SyncRun


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ("name", "source_kind", "enabled", "sync_interval_seconds", "last_sync_at", "last_sync_status")
    list_filter = ("enabled", "source_kind", "last_sync_status")
    search_fields = ("name",)
    readonly_fields = ("server_version", "last_sync_at", "last_sync_status", "metrics_at", "metrics_error")
    fieldsets = (
        (None, {"fields": ("name", "enabled", "sync_interval_seconds")}),
        ("How to reach it", {
            "fields": ("source_kind", "kubeconfig_path", "kube_context", "snapshot_path", "prometheus_url"),
            "description": "Paths only: mount kubeconfig files from a Secret; no credential is stored here.",
        }),
        ("Last sync", {"fields": readonly_fields}),
    )


@admin.register(SyncRun)
class SyncRunAdmin(admin.ModelAdmin):
    list_display = ("cluster", "started", "finished", "status", "duration_ms")
    list_filter = ("status", "cluster")
    date_hierarchy = "started"
    list_select_related = ("cluster",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser
