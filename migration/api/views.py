"""Migration API: readiness evaluations (``?cluster=&latest=true``) and the migration plan."""

from __future__ import annotations

import django_filters
from django.db.models import OuterRef, Subquery
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.base import ReadOnlyViewSet
from inventory.models import Cluster

from ..evaluation import cluster_plan
from ..models import ReadinessEvaluation
from ..plan_command import summarize
from ..views import TARGETS, _filename
from .serializers import PlanSerializer, ReadinessSerializer


class ReadinessFilter(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    latest = django_filters.BooleanFilter(method="only_latest", label="Newest per cluster only")

    class Meta:
        model = ReadinessEvaluation
        fields = ["cluster", "latest"]

    def only_latest(self, qs, name, value):
        if not value:
            return qs
        newest = ReadinessEvaluation.objects.filter(cluster=OuterRef("cluster")).order_by("-evaluated_at", "-pk")
        return qs.filter(pk=Subquery(newest.values("pk")[:1]))


class ReadinessViewSet(ReadOnlyViewSet):
    """Stored checklist evaluations, newest first (a row per change: see ``ReadinessEvaluation``)."""

    queryset = ReadinessEvaluation.objects.select_related("cluster").order_by("-evaluated_at", "-pk")
    serializer_class = ReadinessSerializer
    filterset_class = ReadinessFilter


class PlanView(APIView):
    """The migration plan of ``?cluster=`` (required) towards ``?target=`` (default the newest)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", OpenApiTypes.STR, required=True, description="the cluster's name"),
            OpenApiParameter("target", OpenApiTypes.STR, enum=list(TARGETS), description="Kubernetes version"),
        ],
        responses=PlanSerializer,
    )
    def get(self, request, format=None):
        name = request.query_params.get("cluster") or ""
        target = request.query_params.get("target") or TARGETS[0]
        if not name:
            raise ValidationError({"cluster": ["This parameter is required."]})
        if target not in TARGETS:
            raise ValidationError({"target": [f"One of {', '.join(TARGETS)}."]})
        cluster = get_object_or_404(Cluster, name=name)
        result = cluster_plan(cluster, target)
        body = {"cluster": cluster.name, **summarize(result)}
        body["bundles"] = {
            ns: request.build_absolute_uri(reverse("migration:bundle", args=[cluster.name, _filename(ns)]))
            + f"?target={target}"
            for ns in result.bundles
        }
        return Response(body)
