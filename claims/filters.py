"""Claim list and stuck-queue filters (django-filter); every filtered view is a shareable URL."""

from __future__ import annotations

import django_filters
from django.db.models import Q

from inventory.filters import TextFilter
from inventory.models import AllocationResult, ClaimState, Cluster, Reservation, ResourceClaim

from .models import Category, Finding, Severity


class ClaimFilter(django_filters.FilterSet):
    q = TextFilter(method="search", label="Claim, device or pod")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    namespace = TextFilter(field_name="namespace", lookup_expr="icontains", label="Namespace")
    state = django_filters.ChoiceFilter(choices=ClaimState.choices, label="State")
    node = TextFilter(field_name="node_name", lookup_expr="icontains", label="Node")
    sort = django_filters.OrderingFilter(
        fields=(("created", "created"), ("namespace", "namespace"), ("name", "name"), ("state", "state")),
        label="Sort",
    )

    class Meta:
        model = ResourceClaim
        fields = ["q", "cluster", "namespace", "state", "node"]

    def search(self, qs, name, value):
        # Part of a claim's name or namespace, of a device allocated to it, or of a pod it is
        # reserved for (name or uid). Subqueries, not a join + DISTINCT (PostgreSQL has no
        # equality for the json columns).
        value = value.strip()
        held = AllocationResult.objects.filter(device_name__icontains=value).values("claim_id")
        pods = Reservation.objects.filter(Q(name__icontains=value) | Q(uid__iexact=value)).values("claim_id")
        return qs.filter(Q(name__icontains=value) | Q(namespace__icontains=value) | Q(pk__in=held) | Q(pk__in=pods))

    @property
    def qs(self):
        # A stable order under live refresh: the chosen sort, then the primary key.
        base = super().qs
        order = list(base.query.order_by) or ["cluster__name", "namespace", "name"]
        return base.order_by(*order, "pk")


class StuckFilter(django_filters.FilterSet):
    """Open findings; default order most severe then oldest (``FindingQuerySet.stuck_order``)."""

    # The vocabulary's own names, as the table and the runbooks show them.
    category = django_filters.ChoiceFilter(choices=[(c, c) for c in Category.values], label="Category")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    severity = django_filters.ChoiceFilter(choices=Severity.choices, label="Severity")
    q = TextFilter(method="search", label="Object")

    class Meta:
        model = Finding
        fields = ["category", "cluster", "severity", "q"]

    def search(self, qs, name, value):
        value = value.strip()
        return qs.filter(
            Q(name__icontains=value) | Q(namespace__icontains=value) | Q(node_name__icontains=value)
            | Q(category__icontains=value)
        )

    @property
    def qs(self):
        return super().qs.stuck_order()
