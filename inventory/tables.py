"""django-tables2 tables for the inventory lists (server-side sort and pagination)."""

from __future__ import annotations

import django_tables2 as tables
from django.utils.safestring import mark_safe

from .models import Device, Node


class NodeTable(tables.Table):
    name = tables.Column(linkify=True)
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster")
    gpu_product = tables.Column(verbose_name="GPU product")
    gpu_count = tables.Column(verbose_name="GPUs")
    mig_count = tables.Column(verbose_name="MIG")
    allocated_count = tables.Column(verbose_name="Allocated")
    free_count = tables.Column(verbose_name="Free")
    kubelet_version = tables.Column(verbose_name="Kubelet")
    status = tables.Column(empty_values=(), orderable=False, verbose_name="Status")

    class Meta:
        model = Node
        fields = ("name", "cluster", "gpu_product", "gpu_count", "mig_count", "allocated_count", "free_count", "kubelet_version")
        order_by = ("cluster", "name")
        attrs = {"class": "nodes"}
        empty_text = "No nodes match these filters."

    def render_status(self, record):
        if record.from_slices:
            return mark_safe('<span class="badge grey" title="no Node object was read: known from its ResourceSlices">unknown</span>')
        if not record.ready:
            return mark_safe('<span class="badge red">NotReady</span>')
        if record.unschedulable:
            return mark_safe('<span class="badge amber">Cordoned</span>')
        return mark_safe('<span class="badge green">Ready</span>')


class DeviceTable(tables.Table):
    name = tables.Column(linkify=True)
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster")
    node_name = tables.Column(verbose_name="Node")
    driver = tables.Column()
    type = tables.Column()
    product_name = tables.Column(verbose_name="Product")
    profile = tables.Column(verbose_name="Profile")
    uuid = tables.Column(verbose_name="UUID", attrs={"td": {"class": "mono"}})

    class Meta:
        model = Device
        fields = ("name", "cluster", "node_name", "driver", "type", "product_name", "profile", "uuid")
        order_by = ("cluster", "node_name", "name")
        empty_text = "No devices match."
