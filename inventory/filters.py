"""Filters for the node and device lists (django-filter); every filtered view is a URL."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Exists, OuterRef, Q

from .models import (
    PLACEABLE,
    AllocationResult,
    Cluster,
    Device,
    DeviceClass,
    DeviceType,
    Node,
    Reservation,
    ResourceClaim,
    ResourceSlice,
)

ANY_YES_NO = (("", "Any"), ("true", "Yes"), ("false", "No"))
# The longest text a search box takes: a namespace/name (63 + 1 + 253) with room to spare. A
# longer one names nothing, and SQLite refuses a LIKE pattern past 50,000 bytes.
MAX_TERM = 400


class TextFilter(django_filters.CharFilter):
    """A text filter whose value is at most ``MAX_TERM`` characters (a longer one is a form error)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", MAX_TERM)
        super().__init__(*args, **kwargs)


def device_uuid_q(value: str) -> Q:
    """Devices whose ``uuid`` (GPU-... or MIG-...) or ``parent_uuid`` (a MIG instance's GPU)
    contains ``value``, case-insensitively: a full or partial UUID as nvidia-smi or DCGM print it."""
    return Q(uuid__icontains=value) | Q(parent_uuid__icontains=value)


class YesNoField(forms.NullBooleanField):
    """Empty (any), ``true`` or ``false``; anything else is a form error (Django's
    NullBooleanField reads a typo as "any", which would show every row as if unfiltered)."""

    def to_python(self, value):
        # 1 and 0 as NullBooleanField reads them (links and scripts use them).
        if value not in (None, "", True, False, "true", "false", "True", "False", "1", "0"):
            raise forms.ValidationError("One of true, false (or empty: any).", code="invalid")
        return super().to_python(value)


class YesNoFilter(django_filters.BooleanFilter):
    field_class = YesNoField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", forms.Select(choices=ANY_YES_NO))
        super().__init__(*args, **kwargs)


class IntegerFilter(django_filters.NumberFilter):
    """A whole number (django-filter's NumberFilter takes decimals: "≥ 0.5 free devices")."""

    field_class = forms.IntegerField


def filtered(f: django_filters.FilterSet):
    """The FilterSet's queryset, or none at all when a value is invalid (e.g. an unknown
    cluster in a pasted link): silently dropping the filter would show the whole fleet."""
    return f.qs if not f.is_bound or f.is_valid() else f.queryset.none()


class NodeFilter(django_filters.FilterSet):
    q = TextFilter(method="search", label="Search")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    product = TextFilter(field_name="gpu_product", lookup_expr="icontains", label="GPU product")
    driver = TextFilter(method="by_driver", label="Driver")
    min_free = IntegerFilter(method="by_free_gpus", label="Free whole GPUs ≥ (Ready, schedulable)")
    problems = YesNoFilter(method="with_problems", label="Only problems")

    class Meta:
        model = Node
        fields = ["q", "cluster", "product", "driver", "min_free", "problems"]

    def search(self, qs, name, value):
        return qs.filter(Q(name__icontains=value) | Q(gpu_product__icontains=value))

    def by_driver(self, qs, name, value):
        # Nodes that hold at least one device of that driver, in their own cluster: a namesake
        # node of another cluster is another machine (the (cluster, node_name) index).
        held = Device.objects.filter(cluster_id=OuterRef("cluster_id"), node_name=OuterRef("name"), driver__icontains=value)
        return qs.filter(Exists(held))

    def with_problems(self, qs, name, value):
        return qs.filter(Q(ready=False) | Q(unschedulable=True)) if value else qs

    def by_free_gpus(self, qs, name, value):
        # Whole GPUs, not devices: a node with one free 1g.18gb instance has no free H200.
        if value is None or value <= 0:
            return qs  # every node has at least none
        # Counted by each sync (``reconcile.refresh_node_summaries``); a NotReady or cordoned
        # node offers nothing to a pod being scheduled.
        return qs.filter(PLACEABLE, free_gpu_count__gte=value)


class DeviceFilter(django_filters.FilterSet):
    q = TextFilter(method="search", label="UUID, profile, pod, claim or namespace")
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    type = django_filters.ChoiceFilter(choices=DeviceType.choices, label="Type")
    driver = TextFilter(field_name="driver", lookup_expr="icontains", label="Driver")
    profile = TextFilter(field_name="profile", lookup_expr="icontains", label="MIG profile")
    allocated = YesNoFilter(method="by_allocated", label="Allocated")
    slice = TextFilter(field_name="slice__name", lookup_expr="icontains", label="ResourceSlice")

    class Meta:
        model = Device
        fields = ["q", "cluster", "type", "driver", "profile", "allocated", "slice"]

    # Through the allocations as subqueries, not joins: a join repeats a device per result and
    # reservation, and the DISTINCT over every column that undoes it cost 0.25-0.5 s a query
    # at 5,000 nodes.
    def search(self, qs, name, value):
        value = value.strip()
        # IN (subquery) under the OR: hashed once, where EXISTS would run once per device.
        reserved = Reservation.objects.filter(Q(name__icontains=value) | Q(uid__iexact=value)).values("claim_id")
        claims = ResourceClaim.objects.filter(
            Q(name__icontains=value) | Q(namespace__icontains=value) | Q(pk__in=reserved)).values("pk")
        held = AllocationResult.objects.filter(claim_id__in=claims, device__isnull=False).values("device_id")
        return qs.filter(
            device_uuid_q(value)
            | Q(name__icontains=value)
            | Q(node_name__icontains=value)
            | Q(metrics_pod__icontains=value)
            | Q(profile__icontains=value)
            | Q(pk__in=held)
        )

    def by_allocated(self, qs, name, value):
        if value is None:
            return qs
        held = Exists(AllocationResult.objects.filter(device_id=OuterRef("pk")))
        return qs.filter(held if value else ~held)


class DeviceClassFilter(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    name = TextFilter(field_name="name", lookup_expr="icontains", label="Name")

    class Meta:
        model = DeviceClass
        fields = ["cluster", "name"]


class ResourceSliceFilter(django_filters.FilterSet):
    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all(), to_field_name="name", label="Cluster")
    driver = TextFilter(field_name="driver", lookup_expr="icontains", label="Driver")
    pool = TextFilter(field_name="pool", lookup_expr="icontains", label="Pool")
    node = TextFilter(field_name="node_name", lookup_expr="icontains", label="Node")

    class Meta:
        model = ResourceSlice
        fields = ["cluster", "driver", "pool", "node"]
