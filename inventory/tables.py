"""django-tables2 tables for the inventory lists (server-side sort and pagination)."""

from __future__ import annotations

import copy

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from .listexport import Column
from .models import Device, Node

MAX_PER_PAGE = 500


class BoundedRequestConfig(tables.RequestConfig):
    """``RequestConfig`` whose ``?per_page=`` is clamped to 1..``MAX_PER_PAGE`` (one that is
    not a number is ignored): django-tables2 obeys any value, so ``per_page=-1`` answered 500
    and ``per_page=100000`` rendered 36 MB from 1,000 nodes in a minute."""

    def configure(self, table):
        name = table.prefixed_per_page_field
        raw = self.request.GET.get(name)
        if raw is not None:
            query = self.request.GET.copy()
            try:
                query[name] = str(min(max(int(raw), 1), MAX_PER_PAGE))
            except ValueError:
                query.pop(name)
            self.request = copy.copy(self.request)
            self.request.GET = query
        return super().configure(table)


class NodeTable(tables.Table):
    """The node list. Its queryset carries ``free_sort`` (``FREE``): the Free column sorts by
    what it shows."""

    name = tables.Column(linkify=True)
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster")
    gpu_product = tables.Column(verbose_name="GPU product")
    gpu_count = tables.Column(verbose_name="GPUs")
    mig_count = tables.Column(verbose_name="MIG")
    allocated_count = tables.Column(verbose_name="Allocated")
    free_count = tables.Column(accessor="free", order_by="free_sort", verbose_name="Free")
    kubelet_version = tables.Column(verbose_name="Kubelet")
    status = tables.Column(empty_values=(), orderable=False, verbose_name="Status")

    class Meta:
        model = Node
        fields = ("name", "cluster", "gpu_product", "gpu_count", "mig_count", "allocated_count", "free_count", "kubelet_version")
        order_by = ("cluster", "name")
        attrs = {"class": "nodes"}
        empty_text = "No nodes match these filters."

    def render_gpu_count(self, value, record):
        if not value and record.device_plugin_gpus:
            return format_html('{} <span class="badge amber" title="{}">device plugin</span>', record.device_plugin_gpus,
                               "status.allocatable nvidia.com/gpu: no ResourceSlice publishes these GPUs")
        if record.unpublished_gpus:
            return format_html('0 <span class="badge red" title="{}">none published</span>', UNPUBLISHED)
        return value

    def value_gpu_count(self, value, record):
        return value or record.device_plugin_gpus or 0

    def render_mig_count(self, value, record):
        if not value and record.plugin_mig_count:
            return format_html('{} <span class="badge amber" title="{}">device plugin</span>', record.plugin_mig_count,
                               "status.allocatable nvidia.com/mig-*: no ResourceSlice publishes these MIG instances")
        return value

    def render_free_count(self, value, record):
        if record.unplaceable and record.free_count:
            return format_html('0 <span class="small muted" title="the node is {}: the scheduler places no pod here">({} idle)</span>',
                               record.unplaceable, record.free_count)
        return value

    def value_status(self, record):
        return node_status(record)

    def render_status(self, record):
        if record.from_slices:
            return mark_safe('<span class="badge grey" title="no Node object was read: known from its ResourceSlices">unknown</span>')
        if not record.ready:
            return mark_safe('<span class="badge red">NotReady</span>')
        if record.unschedulable:
            return mark_safe('<span class="badge amber">Cordoned</span>')
        return mark_safe('<span class="badge green">Ready</span>')


class DeviceTable(tables.Table):
    """The device list: every column sorts on the server (``?sort=``); ``holder`` comes from
    ``queries.attach_holders`` on the page's rows (the view attaches it)."""

    name = tables.Column(linkify=True, verbose_name="Device")
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster")
    node_name = tables.TemplateColumn(
        '{% load claimscope %}{% if record.node_name %}{% node_link record.cluster.name record.node_name %}'
        '{% else %}<span class="muted">network</span>{% endif %}', verbose_name="Node")
    driver = tables.Column()
    type = tables.Column(verbose_name="Type")
    product_name = tables.Column(verbose_name="Product")
    profile = tables.Column(verbose_name="Profile", attrs={"td": {"class": "profile"}})
    memory_bytes = tables.Column(verbose_name="Memory", attrs={"td": {"class": "nowrap"}})
    uuid = tables.Column(verbose_name="UUID", attrs={"td": {"class": "mono"}})
    held_by = tables.TemplateColumn('{% include "inventory/_holder.html" with holder=record.holder %}',
                                    orderable=False, verbose_name="Held by", empty_values=())

    class Meta:
        model = Device
        fields = ("name", "cluster", "node_name", "driver", "type", "product_name", "profile", "memory_bytes", "uuid")
        sequence = ("name", "cluster", "node_name", "driver", "type", "product_name", "profile", "memory_bytes", "uuid", "held_by")
        order_by = ("cluster", "node_name", "name")
        attrs = {"class": "devices"}
        empty_text = ("No devices match. Search by GPU or MIG UUID, MIG profile, device or node name, claim name or "
                      "namespace, pod name or uid.")

    def render_type(self, record):
        return record.type_raw or record.type

    def render_memory_bytes(self, value):
        from .templatetags.claimscope import gib

        return gib(value)


class SliceDeviceTable(tables.Table):
    """A ResourceSlice's devices: the sort of its page (``?sort=``) and its header
    (``includes/sort_head.html``); the page renders the rows itself."""

    name = tables.Column(verbose_name="Device", order_by=("name", "pk"))
    type = tables.Column(verbose_name="Type", order_by=("type", "name", "pk"))
    product_name = tables.Column(verbose_name="Product", order_by=("product_name", "name", "pk"))
    profile = tables.Column(verbose_name="Profile", order_by=("profile", "name", "pk"))
    memory_bytes = tables.Column(verbose_name="Memory", order_by=("memory_bytes", "name", "pk"))
    uuid = tables.Column(verbose_name="UUID", order_by=("uuid", "pk"))
    device_classes = tables.Column(verbose_name="DeviceClasses", orderable=False)
    held_by = tables.Column(verbose_name="Held by", orderable=False, empty_values=())

    class Meta:
        model = Device
        fields = ("name", "type", "product_name", "profile", "memory_bytes", "uuid", "device_classes")
        sequence = ("name", "type", "product_name", "profile", "memory_bytes", "uuid", "device_classes", "held_by")
        order_by = ("name",)


class ClassDeviceTable(tables.Table):
    """The devices a DeviceClass selects: sort and header of its page, as ``SliceDeviceTable``."""

    name = tables.Column(verbose_name="Device", order_by=("pool", "name", "pk"))
    node_name = tables.Column(verbose_name="Node", order_by=("node_name", "driver", "name", "pk"))
    product_name = tables.Column(verbose_name="Product", order_by=("product_name", "node_name", "name", "pk"))
    profile = tables.Column(verbose_name="Profile", order_by=("profile", "node_name", "name", "pk"))
    held_by = tables.Column(verbose_name="Held by", orderable=False, empty_values=())

    class Meta:
        model = Device
        fields = ("name", "node_name", "product_name", "profile")
        sequence = ("name", "node_name", "product_name", "profile", "held_by")
        order_by = ("node_name",)


UNPUBLISHED = ("GPU Feature Discovery labels GPUs on this node, but no ResourceSlice publishes one and the device plugin "
               "advertises none (a DRA kubelet plugin not running?)")


def node_status(node: Node) -> str:
    """Ready, NotReady, Cordoned, or unknown (no Node object read: known from its slices)."""
    if node.from_slices:
        return "unknown"
    if not node.ready:
        return "NotReady"
    return "Cordoned" if node.unschedulable else "Ready"


# The CSV/JSON downloads of the node and device lists (``inventory.listexport``).
NODE_EXPORT = [
    Column("cluster", lambda n: n.cluster.name),
    Column("name", lambda n: n.name),
    Column("status", node_status),
    Column("gpu_product", lambda n: n.gpu_product),
    Column("gpus", lambda n: n.gpu_count),
    Column("device_plugin_gpus", lambda n: n.device_plugin_gpus),
    Column("device_plugin_mig_instances", lambda n: n.plugin_mig_count),
    Column("mig_instances", lambda n: n.mig_count),
    Column("allocated", lambda n: n.allocated_count),
    Column("free", lambda n: n.free),
    Column("idle", lambda n: n.free_count),
    Column("devices", lambda n: n.device_count),
    Column("kubelet_version", lambda n: n.kubelet_version),
]


def _holders(d: Device) -> list[dict]:
    return getattr(d, "holders", [])


DEVICE_EXPORT = [
    Column("cluster", lambda d: d.cluster.name),
    Column("node", lambda d: d.node_name),
    Column("driver", lambda d: d.driver),
    Column("pool", lambda d: d.pool),
    Column("name", lambda d: d.name),
    Column("type", lambda d: d.type_raw or d.type),
    Column("product_name", lambda d: d.product_name),
    Column("profile", lambda d: d.profile),
    Column("memory_bytes", lambda d: d.memory_bytes),
    Column("uuid", lambda d: d.uuid),
    Column("parent_uuid", lambda d: d.parent_uuid),
    Column("claims", lambda d: [f"{h['claim'].namespace}/{h['claim'].name}" for h in _holders(d)]),
    Column("pods", lambda d: [p["name"] for h in _holders(d) for p in h["pods"]]),
]
