"""Claims API rows. Related rows (results, reservedFor, open findings) come prefetched by the
view, so a page of claims costs the same few queries whatever its length."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.api.serializers import page_url
from inventory.models import AllocationResult, Reservation, ResourceClaim

from ..models import Finding


class AllocationResultSerializer(serializers.ModelSerializer):
    device_id = serializers.IntegerField(allow_null=True, help_text="the stored device; null when no slice publishes it")

    class Meta:
        model = AllocationResult
        fields = ["request", "driver", "pool", "device_name", "device_id"]


class ReservationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Reservation
        fields = ["resource", "name", "uid"]


class FindingBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Finding
        fields = ["id", "category", "severity", "summary"]


class ClaimSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="claims-api:claim-detail")
    page = serializers.SerializerMethodField()
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    results = AllocationResultSerializer(many=True, read_only=True, help_text="status.allocation.devices.results")
    reserved_for = ReservationSerializer(source="reservations", many=True, read_only=True, help_text="status.reservedFor")
    open_findings = serializers.SerializerMethodField()

    class Meta:
        model = ResourceClaim
        fields = ["id", "url", "page", "cluster", "namespace", "name", "uid", "state", "created", "allocated_at",
                  "deletion_timestamp", "requests", "device_count", "node_name", "results", "reserved_for",
                  "open_findings"]

    def get_page(self, obj: ResourceClaim) -> str | None:
        return page_url(obj)

    @extend_schema_field(FindingBriefSerializer(many=True))
    def get_open_findings(self, obj: ResourceClaim) -> list[dict[str, Any]]:
        return FindingBriefSerializer(getattr(obj, "open_finding_rows", []), many=True).data


class FindingSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="claims-api:finding-detail")
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    runbook = serializers.SerializerMethodField(help_text="the category's runbook page, filled for this finding")

    class Meta:
        model = Finding
        fields = ["id", "url", "runbook", "cluster", "category", "severity", "summary", "next_action", "involved",
                  "kind", "namespace", "name", "claim", "node_name", "since", "first_seen", "last_seen",
                  "resolved_at", "evidence"]

    def get_runbook(self, obj: Finding) -> str:
        return f"{obj.get_runbook_url()}?finding={obj.pk}"
