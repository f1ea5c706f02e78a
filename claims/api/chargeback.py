"""Chargeback API: ``GET /api/claims/chargeback/?cluster=&since=&until=&window=``, the numbers
of the chargeback page (``claims.chargeback_data.build_report``) as JSON."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.models import Cluster

from ..chargeback_data import DEFAULT_WINDOW, WINDOWS, build_report, window


class ChargebackSerializer(serializers.Serializer):
    """Shape of the answer (for the schema): ``claims.chargeback.Report.as_dict`` plus ``clusters``."""

    clusters = serializers.ListField(child=serializers.CharField())
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    currency = serializers.CharField()
    gpu_hours = serializers.FloatField(help_text="whole-GPU-hours allocated in the window")
    namespaces = serializers.ListField(child=serializers.DictField(), help_text="namespace, team, gpu_hours, used, idle_share, cost, products")
    teams = serializers.ListField(child=serializers.DictField())
    not_counted_results = serializers.IntegerField()
    trend = serializers.DictField()


class ChargebackView(APIView):
    """GPU-hours per namespace and GPU product over a window, allocated and used, priced."""

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", OpenApiTypes.STR, description="a cluster's name (default: all)"),
            OpenApiParameter("since", OpenApiTypes.STR, description="window start, ISO 8601"),
            OpenApiParameter("until", OpenApiTypes.STR, description="window end, ISO 8601 (default now, a snapshot cluster's time)"),
            OpenApiParameter("window", OpenApiTypes.STR, enum=list(WINDOWS), description=f"length when since is not given (default {DEFAULT_WINDOW})"),
        ],
        responses={200: ChargebackSerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request, format=None):
        name = request.query_params.get("cluster") or ""
        clusters = list(Cluster.objects.filter(name=name)) if name else list(Cluster.objects.all())
        if name and not clusters:
            raise ValidationError({"cluster": [f"No stored cluster named {name!r}."]})
        preset = request.query_params.get("window", DEFAULT_WINDOW)
        if preset not in WINDOWS:
            raise ValidationError({"window": [f"One of {', '.join(WINDOWS)}."]})
        try:
            since, until = window(clusters, request.query_params.get("since"), request.query_params.get("until"), preset)
        except ValueError as exc:
            raise ValidationError({"since": [f"{exc}: give ISO 8601 times like 2026-11-01T00:00:00Z."]}) from exc
        report, errors = build_report(clusters, since, until)
        return Response({"clusters": [c.name for c in clusters], **report.as_dict(), "errors": errors})
