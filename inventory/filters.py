"""Filters for the node and device lists (django-filter); every filtered view is a URL."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from .models import PLACEABLE, Cluster, Device, DeviceClass, DeviceType, Node, ResourceSlice

ANY_YES_NO = (("", "Any"), ("true", "Yes"), ("false", "No"))


def device_uuid_q(value: str) -> Q:
    """Devices whose ``uuid`` (GPU-... or MIG-...) or ``parent_uuid`` (a MIG instance's GPU)
    contains ``value``, case-insensitively: a full or partial UUID as nvidia-smi or DCGM print it."""
    return Q(uuid__icontains=value) | Q(parent_uuid__icontains=value)


class IntegerFilter(django_filters.NumberFilter):
    """A whole number (django-filter's NumberFilter takes decimals: "≥ 0.5 free devices")."""

    field_class = forms.IntegerField


def free_whole_gpus():
    """Per node (``OuterRef`` to a Node row): how many physical GPUs are wholly free, as an
    integer subquery.

    A GPU counts when the node's slices publish it whole (``type`` gpu, no ``parentUUID``),
    no allocation result names it, and no allocation names any device carved from it (a MIG
    instance or partition whose ``parentUUID`` is its ``uuid``, e.g. the placements a dynamic
    MIG driver publishes beside the whole GPU). A GPU in static MIG mode is published only as
    its instances and is no free whole GPU; one free 1g instance is not a GPU either. Node
    names are unique within a cluster, so the count is per (cluster, node)."""
    carved_busy = Device.objects.filter(
        cluster_id=OuterRef("cluster_id"), parent_uuid=OuterRef("uuid"), allocations__isnull=False
    )
    gpus = (
        Device.objects.filter(
            cluster_id=OuterRef("cluster_id"), node_name=OuterRef("name"), type=DeviceType.GPU, parent_uuid="",
            allocations__isnull=True,
        )
        .filter(Q(uuid="") | ~Exists(carved_busy))
        .order_by()
        .values("node_name")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(gpus, output_field=IntegerField()), Value(0))


def filtered(f: django_filters.FilterSet):
    """The FilterSet's queryset, or none at all when a value is invalid (e.g. an unknown
    cluster in a pasted link): silently dropping the filter would show the whole fleet."""
    return f.qs if not f.is_bound or f.is_valid() else f.queryset.none()


class NodeFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    product = django_filters.CharFilter(field_name="gpu_product", lookup_expr="icontains", label="GPU product")
    driver = django_filters.CharFilter(method="by_driver", label="Driver")
    min_free = IntegerFilter(method="by_free_gpus", label="Free whole GPUs ≥ (Ready, schedulable)")
    problems = django_filters.BooleanFilter(method="with_problems", label="Only problems", widget=forms.Select(choices=ANY_YES_NO))

    class Meta:
        model = Node
        fields = ["q", "cluster", "product", "driver", "min_free", "problems"]

    def search(self, qs, name, value):
        return qs.filter(Q(name__icontains=value) | Q(gpu_product__icontains=value))

    def by_driver(self, qs, name, value):
        # Nodes that hold at least one device of that driver (an indexed subquery).
        nodes = Device.objects.filter(driver__icontains=value).values("node_name")
        return qs.filter(name__in=nodes)

    def with_problems(self, qs, name, value):
        return qs.filter(Q(ready=False) | Q(unschedulable=True)) if value else qs

    def by_free_gpus(self, qs, name, value):
        # Whole GPUs, not devices: a node with one free 1g.18gb instance has no free H200.
        if value is None:
            return qs
        if value > 0:  # a NotReady or cordoned node offers nothing to a pod being scheduled
            qs = qs.filter(PLACEABLE)
        return qs.annotate(free_gpus=free_whole_gpus()).filter(free_gpus__gte=value)


class DeviceFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="UUID, profile, pod, claim or namespace")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    type = django_filters.ChoiceFilter(choices=DeviceType.choices, label="Type")
    driver = django_filters.CharFilter(field_name="driver", lookup_expr="icontains", label="Driver")
    profile = django_filters.CharFilter(field_name="profile", lookup_expr="icontains", label="MIG profile")
    allocated = django_filters.BooleanFilter(method="by_allocated", label="Allocated", widget=forms.Select(choices=ANY_YES_NO))
    slice = django_filters.CharFilter(field_name="slice__name", lookup_expr="icontains", label="ResourceSlice")

    class Meta:
        model = Device
        fields = ["q", "cluster", "type", "driver", "profile", "allocated", "slice"]

    def search(self, qs, name, value):
        value = value.strip()
        return qs.filter(
            device_uuid_q(value)
            | Q(name__icontains=value)
            | Q(node_name__icontains=value)
            | Q(allocations__claim__name__icontains=value)
            | Q(allocations__claim__reservations__name__icontains=value)
            | Q(metrics_pod__icontains=value)
            | Q(profile__icontains=value)
            | Q(allocations__claim__namespace__icontains=value)
            | Q(allocations__claim__reservations__uid__iexact=value)
        ).distinct()

    def by_allocated(self, qs, name, value):
        if value is None:
            return qs
        return qs.filter(allocations__isnull=not value).distinct()


class DeviceClassFilter(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    name = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Name")

    class Meta:
        model = DeviceClass
        fields = ["cluster", "name"]


class ResourceSliceFilter(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    driver = django_filters.CharFilter(field_name="driver", lookup_expr="icontains", label="Driver")
    pool = django_filters.CharFilter(field_name="pool", lookup_expr="icontains", label="Pool")
    node = django_filters.CharFilter(field_name="node_name", lookup_expr="icontains", label="Node")

    class Meta:
        model = ResourceSlice
        fields = ["cluster", "driver", "pool", "node"]
