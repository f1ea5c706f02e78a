"""Migration API rows: readiness evaluations as stored, the plan as ``plan_command.summarize`` gives it."""

from __future__ import annotations

from rest_framework import serializers

from ..models import ReadinessEvaluation


class ReadinessItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=["pass", "fail", "unknown", "attested"])
    evidence = serializers.ListField(child=serializers.CharField())
    next_step = serializers.CharField(allow_blank=True)
    attestation_id = serializers.IntegerField(allow_null=True)


class ReadinessSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="migration-api:readiness-detail")
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    items = ReadinessItemSerializer(many=True, read_only=True)

    class Meta:
        model = ReadinessEvaluation
        fields = ["id", "url", "cluster", "evaluated_at", "trigger", "score", "passed", "total", "stage", "items"]


class PlanStepSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    id = serializers.CharField()
    status = serializers.CharField()
    detail = serializers.CharField(allow_blank=True)
    progress = serializers.ListField(child=serializers.IntegerField(), allow_null=True)


class PlanFindingSerializer(serializers.Serializer):
    code = serializers.CharField()
    severity = serializers.CharField()
    reason = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField(allow_blank=True, allow_null=True)


class PlanRequestSerializer(serializers.Serializer):
    container = serializers.CharField()
    init = serializers.BooleanField()
    resource = serializers.CharField()
    count = serializers.IntegerField()


class PlanWorkloadSerializer(serializers.Serializer):
    workload = serializers.CharField(help_text="Kind namespace/name")
    gpus = serializers.IntegerField()
    requests = PlanRequestSerializer(many=True)
    uses_claims = serializers.BooleanField()


class PlanGpuModelSerializer(serializers.Serializer):
    product = serializers.CharField()
    memory_bytes = serializers.IntegerField(allow_null=True)
    nodes = serializers.ListField(child=serializers.CharField())
    aliases = serializers.ListField(child=serializers.CharField(),
                                    help_text="nvidia.com/gpu.product label values on nodes whose slices publish this model")


class PlanSelectorSerializer(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField())
    expression = serializers.CharField()


class PlanSerializer(serializers.Serializer):
    """``migration.plan_command.summarize`` of the plan, with the cluster's name."""

    cluster = serializers.CharField()
    server_version = serializers.CharField(allow_null=True)
    target_version = serializers.CharField()
    schema_version = serializers.CharField(allow_null=True)
    workloads_found = serializers.IntegerField()
    templates_generated = serializers.IntegerField()
    blockers = serializers.IntegerField()
    warnings = serializers.IntegerField()
    workloads = PlanWorkloadSerializer(many=True)
    templates = serializers.ListField(child=serializers.CharField())
    gpu_models = PlanGpuModelSerializer(many=True)
    selector_options = PlanSelectorSerializer(many=True)
    findings = PlanFindingSerializer(many=True)
    steps = PlanStepSerializer(many=True)
    errors = serializers.ListField(child=serializers.CharField())
    bundles = serializers.DictField(child=serializers.CharField(), help_text="bundle URL per namespace")
