"""Claims API: ResourceClaims and findings, filtered by the claims list's and stuck queue's FilterSets."""

from __future__ import annotations

import django_filters
from django.db.models import Prefetch

from inventory.api.base import ReadOnlyViewSet
from inventory.models import AllocationResult, ResourceClaim

from ..filters import ClaimFilter, StuckFilter
from ..models import Finding
from .serializers import ClaimSerializer, FindingSerializer


class ClaimViewSet(ReadOnlyViewSet):
    """ResourceClaims with allocation results, ``reservedFor`` and open findings; filters as the claims list."""

    queryset = ResourceClaim.objects.select_related("cluster").defer("raw").prefetch_related(
        Prefetch("results", queryset=AllocationResult.objects.order_by("pk")),
        "reservations",
        Prefetch("findings", queryset=Finding.objects.open().only("pk", "claim_id", "category", "severity", "summary")
                 .order_by("severity_rank", "pk"), to_attr="open_finding_rows"),
    )
    serializer_class = ClaimSerializer
    filterset_class = ClaimFilter


class FindingFilter(StuckFilter):
    """The stuck queue's filters plus ``open`` (true: the stuck queue; false: resolved; unset: all)."""

    open = django_filters.BooleanFilter(field_name="resolved_at", lookup_expr="isnull", label="Open")

    class Meta(StuckFilter.Meta):
        fields = [*StuckFilter.Meta.fields, "open"]


class FindingViewSet(ReadOnlyViewSet):
    """Findings, most severe then oldest first; ``?open=true`` is the stuck queue."""

    queryset = Finding.objects.select_related("cluster")
    serializer_class = FindingSerializer
    filterset_class = FindingFilter
