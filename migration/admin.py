from django.contrib import admin

from .models import Attestation, ReadinessEvaluation


@admin.register(ReadinessEvaluation)
class ReadinessEvaluationAdmin(admin.ModelAdmin):
    list_display = ("cluster", "evaluated_at", "trigger", "score", "passed", "total", "stage")
    list_filter = ("cluster", "trigger")
    readonly_fields = ("fingerprint",)


@admin.register(Attestation)
class AttestationAdmin(admin.ModelAdmin):
    list_display = ("cluster", "item_id", "attested_by_name", "attested_at", "expires_at", "evidence_url")
    list_filter = ("cluster", "item_id")
