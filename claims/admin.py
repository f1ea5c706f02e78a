from django.contrib import admin

from .models import ClaimTransition, Finding


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = ("category", "severity", "kind", "namespace", "name", "cluster", "since", "resolved_at")
    list_filter = ("severity", "category", "cluster")
    search_fields = ("name", "namespace", "node_name", "summary")
    raw_id_fields = ("claim",)


@admin.register(ClaimTransition)
class ClaimTransitionAdmin(admin.ModelAdmin):
    list_display = ("observed_at", "cluster", "namespace", "name", "field", "old", "new", "reason")
    list_filter = ("field", "cluster")
    search_fields = ("name", "namespace", "claim_uid")
    raw_id_fields = ("finding",)
