"""Telemetry pages: device and node charts, node values, cluster heatmap, allocated-but-idle, unmatched series.

Latest values come from the rows (``Device.metrics``, written by ``inventory.poll_metrics`` or a
snapshot's scrape); history comes from Prometheus range queries on demand and is never stored.
Every page states when the values are stale (``telemetry.metrics_state``). Charts load lazily:
the page holds an ``hx-trigger="intersect once"`` container, the chart fragment carries the
plotly figure as JSON (``json_script``) and ``static/js/telemetry.js`` loads plotly.js from
static and draws it (no inline scripts: the CSP allows scripts from 'self' only).

``?end=ISO`` sets the end of a chart or idle window (default now) so old data can be charted;
``?at=`` is not needed here: the poll task takes it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.vary import vary_on_headers

from . import charts, mig
from .dcgm import METRICS, utilization_percent
from .htmx import partial_template
from .kube import GPU_DRIVER
from .lookup import by_name
from .models import (
    AllocationResult,
    Cluster,
    Device,
    DeviceType,
    Node,
    Pod,
    RecordedSeries,
    Reservation,
    ResourceSlice,
    UnmatchedSeries,
)
from .prometheus import MetricsUnavailable
from .telemetry import (
    JOIN_FIELDS,
    average_utilization,
    device_history,
    gpu_neighbours,
    gpu_uuids,
    has_history,
    join_device,
    metrics_state,
    node_history,
    prometheus_url_for,
    recorded_end,
)

HEATMAP_NODES_PER_PAGE = 100
UNMATCHED_PER_PAGE = 100
LIST_LIMIT = 500
IDLE_DEFAULT_WINDOW = "24h"


def _parse_end(raw: str) -> datetime | None:
    """``?end=`` text as an aware datetime (naive = UTC; a ``+`` offset that a URL turned into
    a space read back), None when it is no ISO 8601 time."""
    try:
        t = datetime.fromisoformat(raw.replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _end(request, default: datetime | None = None) -> datetime:
    """``?end=`` as an aware datetime, else ``default``, else now. Bad values fall back the
    same way."""
    raw = request.GET.get("end", "")
    return (_parse_end(raw) if raw else None) or default or timezone.now()


def _chart_end(request, cluster: Cluster) -> datetime:
    """End of a chart window: ``?end=``; for a cluster charted from its snapshot's recorded
    history (no Prometheus), the newest recorded point, so the chart shows the recording
    however long ago it was made; else now."""
    if request.GET.get("end") or prometheus_url_for(cluster):
        return _end(request)
    return _end(request, recorded_end(cluster))


class IdleForm(forms.Form):
    """The idle page's parameters. A value it cannot read is an error, not its default: a
    pasted link with a typo would otherwise show the default's numbers (or, for the
    cluster, the whole fleet's) as if they were the link's."""

    cluster = forms.ModelChoiceField(Cluster.objects.all(), to_field_name="name", required=False,
                                     error_messages={"invalid_choice": "no stored cluster has this name"})
    threshold = forms.FloatField(min_value=0, max_value=100, required=False)
    busy = forms.FloatField(min_value=0, max_value=100, required=False)
    window = forms.ChoiceField(choices=[(w, w) for w in charts.WINDOWS], required=False)
    end = forms.CharField(required=False)

    def clean_end(self) -> datetime | None:
        raw = self.cleaned_data["end"]
        if not raw:
            return None
        if (t := _parse_end(raw)) is None:
            raise forms.ValidationError("not an ISO 8601 time")
        return t

    def refused(self) -> list[str]:
        """Each invalid parameter with the value given and why, e.g. ``threshold=nan: Enter a number.``"""
        return [f"{name}={self.data.get(name)!r}: {' '.join(errs)}" for name, errs in self.errors.items()]


def value_rows(metrics: dict[str, float]) -> list[dict[str, Any]]:
    """Stored latest values as ``{label, field, value, unit}`` rows, in ``METRICS`` order.

    GR engine activity (a 0..1 ratio) is shown in percent; framebuffer gets a used-of-total
    row (total = FB_USED + FB_FREE, MiB). Fields outside ``METRICS`` follow by name.
    """
    rows = []
    for field, (label, unit) in METRICS.items():
        v = metrics.get(field)
        if v is None:
            continue
        if field == charts.GR_ACTIVE:
            v, unit = v * 100.0, "%"
        rows.append({"label": label, "field": field, "value": v, "unit": unit})
    used, free = metrics.get(charts.FB_USED), metrics.get(charts.FB_FREE)
    if used is not None and free is not None:
        rows.append({"label": "Framebuffer total (used + free)", "field": "", "value": used + free, "unit": "MiB"})
    for field in sorted(set(metrics) - set(METRICS)):
        rows.append({"label": field, "field": field, "value": metrics[field], "unit": ""})
    return rows


def _device(pk: int) -> Device:
    return get_object_or_404(Device.objects.select_related("cluster").defer("capacity"), pk=pk)


def index(request):
    """Clusters with their telemetry state and links to the heatmap and unmatched series."""
    now = timezone.now()
    unmatched = dict(UnmatchedSeries.objects.values_list("cluster").annotate(n=Count("pk")).order_by())
    with_values = dict(
        Device.objects.exclude(metrics={}).values_list("cluster").annotate(n=Count("pk")).order_by()
    )
    recorded = dict(RecordedSeries.objects.values_list("cluster").annotate(n=Count("pk")).order_by())
    rows = [
        {"state": metrics_state(c, now), "unmatched": unmatched.get(c.pk, 0), "with_values": with_values.get(c.pk, 0),
         "recorded": recorded.get(c.pk, 0)}
        for c in Cluster.objects.all()
    ]
    return render(request, "telemetry/index.html", {"rows": rows, "states": [r["state"] for r in rows]})


@vary_on_headers("HX-Request")
def device_panel(request, pk: int):
    """Current values with units, window picker and a lazily loaded chart for one device."""
    device = _device(pk)
    state = metrics_state(device.cluster, timezone.now())
    window, _ = charts.window_seconds(request.GET.get("window"))
    ctx = {
        "device": device, "states": [state], "state": state, "values": value_rows(device.metrics),
        "charted": state.polled or has_history(device.cluster), "recorded": not state.polled,
        "window": window, "windows": list(charts.WINDOWS), "end": request.GET.get("end", ""),
    }  # fmt: skip
    return render(request, partial_template(request, "telemetry/device.html", "panel"), ctx)


def _device_figure(request, device: Device):
    window, window_s = charts.window_seconds(request.GET.get("window"))
    end = _chart_end(request, device.cluster)
    start = end - timedelta(seconds=window_s)
    neighbours = gpu_neighbours([device])
    series = device_history(device, neighbours, start, end, charts.step_seconds(window_s))
    title = charts.chart_title(f"{device.node_name} {device.name}", f"last {window} to {end:%Y-%m-%d %H:%M:%S} UTC")
    note = "DCGM reports this per physical GPU:<br>see the node chart" if device.parent_uuid else ""
    return charts.device_figure(series, start=start, end=end, title=title, per_gpu_note=note), series, window


def device_chart(request, pk: int):
    """HTML fragment: the figure as JSON for ``static/js/telemetry.js``, or why there is none."""
    device = _device(pk)
    ctx: dict[str, Any] = {"device": device, "error": "", "figure": None, "recorded": not prometheus_url_for(device.cluster)}
    try:
        fig, series, ctx["window"] = _device_figure(request, device)
        ctx["figure"] = json.loads(fig.to_json())  # plain JSON types for json_script
        ctx["fig_id"] = f"fig-{device.pk}"
        ctx["empty"] = not series
    except MetricsUnavailable as exc:
        ctx["error"] = str(exc)
    return render(request, "telemetry/device.html#chart", ctx)


def device_chart_json(request, pk: int):
    """The plotly figure as JSON (``fig.to_json()``); 503 with the reason when Prometheus fails."""
    device = _device(pk)
    try:
        fig, _, _ = _device_figure(request, device)
    except MetricsUnavailable as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain; charset=utf-8")
    return HttpResponse(fig.to_json(), content_type="application/json")


def _gpu_groups(devices: list[Device]) -> list[dict[str, Any]]:
    """GPUs of one node in minor order (``gpu-<minor>`` names), each ``{"device", "migs",
    "name"}`` with its MIG instances (by ``parentUUID``) sorted by name."""
    gpus: dict[str, dict[str, Any]] = {}
    for d in devices:
        if d.type == DeviceType.GPU:
            gpus.setdefault(d.uuid or d.name, {"device": None, "migs": [], "name": d.name})["device"] = d
    for d in devices:
        if d.type == DeviceType.MIG:
            g = gpus.setdefault(d.parent_uuid or d.name, {"device": None, "migs": [], "name": d.name.split("-mig-")[0]})
            g["migs"].append(d)
    for g in gpus.values():
        g["migs"].sort(key=lambda m: m.name)
    return sorted(gpus.values(), key=lambda g: (_minor(g["name"]), g["name"]))


def _arrange(devices: list[Device]) -> list[dict[str, Any]]:
    """``_gpu_groups`` with each device's utilization and heat colour from its latest values."""
    groups = _gpu_groups(devices)
    for g in groups:
        for d in [g["device"], *g["migs"]]:
            if d is not None:
                d.util = utilization_percent(d.metrics)
                d.colour = charts.heat_colour(d.util)
    return groups


def _minor(name: str) -> int:
    parts = name.split("-")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 10**6


_CELL_FIELDS = ("id", "cluster_id", "node_name", "name", "type", "uuid", "parent_uuid", "profile", "metrics", "metrics_at", "metrics_pod")


@vary_on_headers("HX-Request")
def node_panel(request, cluster_name: str, name: str):
    """Latest values of every GPU and MIG instance of one node, with units and the stale banner."""
    node = by_name(Node.objects.select_related("cluster").only("name", "cluster", "uid"), cluster__name=cluster_name, name=name)
    devices = list(
        Device.objects.filter(cluster=node.cluster, node_name=node.name, driver=GPU_DRIVER)
        .exclude(type=DeviceType.OTHER).only(*_CELL_FIELDS)
    )  # fmt: skip
    for d in devices:
        d.values = {r["field"]: r for r in value_rows(d.metrics)}
    state = metrics_state(node.cluster, timezone.now())
    window, _ = charts.window_seconds(request.GET.get("window"))
    ctx = {
        "node": node, "gpus": _arrange(devices), "states": [state], "state": state,
        "charted": state.polled or has_history(node.cluster), "recorded": not state.polled,
        "window": window, "windows": list(charts.WINDOWS), "end": request.GET.get("end", ""),
    }  # fmt: skip
    return render(request, partial_template(request, "telemetry/node.html", "panel"), ctx)


def _node_and_devices(cluster_name: str, name: str) -> tuple[Node, list[Device]]:
    """The node and its gpu.nvidia.com GPU and MIG devices with the join fields. 2 queries."""
    node = by_name(Node.objects.select_related("cluster").only("name", "cluster", "uid"), cluster__name=cluster_name, name=name)
    devices = list(
        Device.objects.filter(cluster=node.cluster, node_name=node.name, driver=GPU_DRIVER)
        .exclude(type=DeviceType.OTHER).only("id", *JOIN_FIELDS)
    )  # fmt: skip
    return node, devices


def chart_devices(devices: list[Device], limit: int | None = None) -> tuple[list[Device], int]:
    """``(devices of the first limit physical GPUs, number of physical GPUs)``: GPUs in minor
    order, each followed by its MIG instances by name (``_gpu_groups``); only GPUs with a UUID,
    which Prometheus selects them by. ``limit`` defaults to ``charts.NODE_CHART_GPUS``."""
    limit = charts.NODE_CHART_GPUS if limit is None else limit
    members = [[d for d in (g["device"], *g["migs"]) if d is not None] for g in _gpu_groups(devices)]
    with_uuid = [m for m in members if gpu_uuids(m)]
    return [d for m in with_uuid[:limit] for d in m], len(with_uuid)


def _node_figure(request, node: Node, devices: list[Device]):
    window, window_s = charts.window_seconds(request.GET.get("window"))
    end = _chart_end(request, node.cluster)
    start = end - timedelta(seconds=window_s)
    shown, total = chart_devices(devices)
    series = node_history(node.cluster, shown, start, end, charts.step_seconds(window_s))
    title = charts.chart_title(node.name, f"last {window} to {end:%Y-%m-%d %H:%M:%S} UTC")
    fig = charts.node_figure(series, [join_device(d) for d in shown], start=start, end=end, title=title)
    return fig, window, len(gpu_uuids(shown)), total


def node_chart(request, cluster_name: str, name: str):
    """HTML fragment: utilization and power of the node's GPUs over a window, one line per
    GPU or MIG instance, from ONE Prometheus range query; or why there is no chart."""
    node, devices = _node_and_devices(cluster_name, name)
    ctx: dict[str, Any] = {
        "node": node, "error": "", "figure": None, "limit": charts.NODE_CHART_GPUS, "recorded": not prometheus_url_for(node.cluster),
    }  # fmt: skip
    try:
        fig, ctx["window"], ctx["gpus_shown"], ctx["gpus_total"] = _node_figure(request, node, devices)
        ctx["figure"] = json.loads(fig.to_json())  # plain JSON types for json_script
        ctx["empty"] = not fig.data
    except MetricsUnavailable as exc:
        ctx["error"] = str(exc)
    return render(request, "telemetry/node.html#chart", ctx)


def node_chart_json(request, cluster_name: str, name: str):
    """The node's plotly figure as JSON; 503 with the reason when Prometheus fails."""
    node, devices = _node_and_devices(cluster_name, name)
    try:
        fig, *_ = _node_figure(request, node, devices)
    except MetricsUnavailable as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain; charset=utf-8")
    return HttpResponse(fig.to_json(), content_type="application/json")


@vary_on_headers("HX-Request")
def heatmap(request, cluster_name: str):
    """GPUs by node x index coloured by utilization, MIG instances inside their GPU; 100 nodes
    a page, so a 5,000-node cluster costs the same queries per page as a small one."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    nodes_qs = Node.objects.filter(cluster=cluster).order_by("name").only(
        "name", "gpu_product", "ready", "unschedulable", "cluster_id", "gpu_count", "plugin_gpu_count", "plugin_mig_count", "labels")
    page = Paginator(nodes_qs, HEATMAP_NODES_PER_PAGE).get_page(request.GET.get("page"))
    nodes = list(page.object_list)
    by_node: dict[str, list[Device]] = defaultdict(list)
    devs = Device.objects.filter(cluster=cluster, node_name__in=[n.name for n in nodes], driver=GPU_DRIVER).exclude(type=DeviceType.OTHER)
    for d in devs.only(*_CELL_FIELDS):
        by_node[d.node_name].append(d)
    # A node without DRA devices may still have GPUs, on the device plugin, or labelled GPUs
    # that nothing publishes (a DRA driver down): said, not "no GPU devices".
    rows = [{"node": n, "gpus": _arrange(by_node.get(n.name, [])),
             "plugin_gpus": None if n.name in by_node else n.device_plugin_gpus,
             "plugin_migs": 0 if n.name in by_node else n.plugin_mig_count,
             "unpublished": n.name not in by_node and n.unpublished_gpus} for n in nodes]
    state = metrics_state(cluster, timezone.now())
    legend = [{"label": f"{u}%", "colour": charts.heat_colour(u)} for u in (0, 25, 50, 75, 100)]
    ctx = {"cluster": cluster, "page": page, "rows": rows, "states": [state], "legend": legend, "no_data": charts.heat_colour(None),
           # (asked only when this page has no DRA GPU: a page of a DRA cluster costs no query more)
           "no_dra": not by_node and not Device.objects.filter(cluster=cluster, driver=GPU_DRIVER).exists(),
           "gpu_slices": lambda: ResourceSlice.objects.filter(cluster=cluster, driver=GPU_DRIVER).exists(),
           "plugin_gpus": sum((r["plugin_gpus"] or 0) + r["plugin_migs"] for r in rows)}
    return render(request, partial_template(request, "telemetry/heatmap.html", "grid"), ctx)


def unmatched(request, cluster_name: str):
    """DCGM series that fit no device of the cluster's slices, with the reason, 100 a page."""
    cluster = get_object_or_404(Cluster, name=cluster_name)
    qs = UnmatchedSeries.objects.filter(cluster=cluster).order_by("reason", "field", "pk")
    reasons = list(qs.values("reason").annotate(n=Count("pk")).order_by("-n", "reason")[:20])
    page = Paginator(qs, UNMATCHED_PER_PAGE).get_page(request.GET.get("page"))
    ctx = {"cluster": cluster, "page": page, "reasons": reasons, "states": [metrics_state(cluster, timezone.now())]}
    return render(request, "telemetry/unmatched.html", ctx)


def gpu_fraction(device: Device) -> float:
    """Share of a physical GPU a device is: 1 for a whole GPU; for a MIG instance its profile's
    memory slices over the model's (profile tables, ``inventory/data/mig_profiles.yaml``),
    1 when the model or profile is unknown (over- rather than under-counting waste)."""
    if device.type != DeviceType.MIG:
        return 1.0
    model = mig.model_for(device.product_name)
    prof = model.profile(device.profile) if model and device.profile else None
    return prof.size / model.slices if model and prof else 1.0


def hours_in_window(since: datetime | None, until: datetime, window_s: int) -> float:
    """Hours of the ``window_s`` seconds ending at ``until`` during which a claim allocated at
    ``since`` (``status.allocation`` time, else the claim's creation) held its device: never
    negative, never more than the window; the whole window when ``since`` is unknown."""
    held = (until - since).total_seconds() if since else window_s
    return max(0.0, min(float(window_s), held)) / 3600


def sample_age_s(sampled_at: datetime | None, ref: datetime) -> float | None:
    """Seconds from a stored sample (``Device.metrics_at``) to ``ref``; None when unknown."""
    return (ref - sampled_at).total_seconds() if sampled_at else None


def age_text(seconds: float | None) -> str:
    """``3 d 4 h`` / ``5 h 10 min`` / ``42 s`` for a sample age; words for unknown or negative."""
    if seconds is None:
        return "unknown age"
    if seconds < 0:
        return "after the window end"
    s = int(seconds)
    d, h, m = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if d:
        return f"{d} d {h} h"
    if h:
        return f"{h} h {m} min"
    return f"{m} min" if m else f"{s} s"


@vary_on_headers("HX-Request")
def idle(request):
    """Devices a claim holds whose utilization stayed under ``threshold`` percent over
    ``window``, grouped by namespace with GPU-hours wasted; and busy devices no claim holds.

    Two bases, totalled apart so a reader can tell them apart:

    - "measured": Prometheus ``avg_over_time`` over the window ending at ``end``; hours = the
      part of the window the claim held the device.
    - "estimate": the stored latest value (``Device.metrics``), assumed to hold over the window;
      hours = the part of the window the claim held it, so never more than the window (one
      sample never stands for the claim's whole age). The window ends at ``end`` for a polled
      cluster and at the sample time (``Device.metrics_at``) for one read from a snapshot, so
      reloading does not change the figures. An estimate whose sample is older than the window
      (against ``end``, or the cluster's newest sample ``Cluster.metrics_at`` for a snapshot) is
      "no recent data": listed apart, in no total.

    GPU-hours wasted = hours x the device's share of a GPU (``gpu_fraction``).
    """
    form = IdleForm(request.GET)
    valid = form.is_valid()
    got = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
    threshold, busy = got.get("threshold", 5.0), got.get("busy", 50.0)
    window = got.get("window", IDLE_DEFAULT_WINDOW)
    window_s = charts.WINDOWS[window]
    end = got.get("end") or timezone.now()
    clusters = list(Cluster.objects.all())
    chosen = got.get("cluster")
    if not valid:
        ctx = {"threshold": threshold, "busy": busy, "window": window, "windows": list(charts.WINDOWS),
               "end": request.GET.get("end", ""), "clusters": clusters, "chosen": chosen, "refused": form.refused()}
        return render(request, partial_template(request, "telemetry/idle.html", "tables"), ctx)
    shown = [chosen] if chosen else clusters

    results = AllocationResult.objects.filter(device__isnull=False, cluster__in=shown).select_related("device", "claim")
    results = list(
        results.only(
            "request", "cluster_id", "claim__name", "claim__namespace", "claim__allocated_at", "claim__created",
            "claim__state", "claim__cluster_id", *(f"device__{f}" for f in (*_CELL_FIELDS, "driver", "pool", "product_name", "type_raw", "memory_bytes")),
        )
    )  # fmt: skip
    by_cluster: dict[int, list[Device]] = defaultdict(list)
    for r in results:
        by_cluster[r.cluster_id].append(r.device)
    measured: dict[int, float] = {}
    errors = []
    polled_ids = {c.pk for c in shown if prometheus_url_for(c)}
    polled = [c for c in shown if c.pk in polled_ids and by_cluster.get(c.pk)]
    neighbours = gpu_neighbours([d for c in polled for d in by_cluster[c.pk]]) if polled else []
    for c in polled:
        try:
            measured.update(average_utilization(c, by_cluster[c.pk], neighbours, window_s, end))
        except MetricsUnavailable as exc:
            errors.append(f"{c.name}: {exc}")

    pods = _pods_of([r.claim_id for r in results])
    by_pk = {c.pk: c for c in clusters}
    # Snapshot values are frozen at their sample time: measure against it, not the clock.
    ref = {c.pk: end if c.pk in polled_ids else (c.metrics_at or end) for c in shown}
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    unknown = 0
    no_recent: list[dict[str, Any]] = []
    for r in results:
        d, claim = r.device, r.claim
        since = claim.allocated_at or claim.created
        cname = by_pk[r.cluster_id].name
        age = None
        if d.pk in measured:
            util, basis = measured[d.pk], "measured"
            hours = hours_in_window(since, end, window_s)
        else:
            util, basis = utilization_percent(d.metrics), "estimate"
            if util is None:
                unknown += 1
                continue
            age = sample_age_s(d.metrics_at, ref[r.cluster_id])
            if age is None or not 0 <= age <= window_s:
                no_recent.append(
                    {"device": d, "claim": claim, "request": r.request, "util": util, "cluster": cname, "age": age_text(age)}
                )
                continue
            until = ref[r.cluster_id] if r.cluster_id in polled_ids else d.metrics_at
            hours = hours_in_window(since, until, window_s)
        if util >= threshold:
            continue
        g = groups.setdefault((cname, claim.namespace), {
            "cluster": cname, "namespace": claim.namespace, "rows": [], "gpu_hours": 0.0, "measured": 0.0, "estimated": 0.0,
        })  # fmt: skip
        wasted = hours * gpu_fraction(d)
        g["gpu_hours"] += wasted
        g["measured" if basis == "measured" else "estimated"] += wasted
        g["rows"].append({
            "device": d, "claim": claim, "request": r.request, "util": util, "basis": basis, "hours": hours,
            "gpu_hours": wasted, "pods": pods.get(r.claim_id, []), "cluster": cname,
            "age": age_text(age) if basis == "estimate" else "",
        })  # fmt: skip
    idle_groups = sorted(groups.values(), key=lambda g: (-g["gpu_hours"], g["cluster"], g["namespace"]))
    rows = [row for g in idle_groups for row in g["rows"]]
    no_recent.sort(key=lambda x: (x["cluster"], x["device"].node_name, x["device"].name, x["claim"].name))

    busy_q = Q(metrics__DCGM_FI_DEV_GPU_UTIL__gt=busy) | (
        Q(metrics__DCGM_FI_DEV_GPU_UTIL__isnull=True) & Q(metrics__DCGM_FI_PROF_GR_ENGINE_ACTIVE__gt=busy / 100)
    )
    busy_qs = Device.objects.filter(busy_q, allocations__isnull=True, cluster__in=shown).select_related("cluster")
    busy_rows = list(busy_qs.only(*_CELL_FIELDS, "cluster__name").order_by("cluster__name", "node_name", "name")[:LIST_LIMIT])
    for d in busy_rows:
        d.util = utilization_percent(d.metrics)

    states = [metrics_state(c, timezone.now()) for c in shown]
    ctx = {
        "threshold": threshold, "busy": busy, "window": window, "windows": list(charts.WINDOWS), "end": request.GET.get("end", ""),
        "clusters": clusters, "chosen": chosen, "groups": idle_groups, "busy_rows": busy_rows, "errors": errors,
        "unknown": unknown, "states": states, "idle_count": len(rows),
        "measured_gpu_hours": sum(g["measured"] for g in idle_groups),
        "measured_count": sum(1 for row in rows if row["basis"] == "measured"),
        "estimated_gpu_hours": sum(g["estimated"] for g in idle_groups),
        "estimated_count": sum(1 for row in rows if row["basis"] == "estimate"),
        "no_recent": no_recent[:LIST_LIMIT], "no_recent_count": len(no_recent),
    }  # fmt: skip
    return render(request, partial_template(request, "telemetry/idle.html", "tables"), ctx)


def _pods_of(claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Claim id -> its ``reservedFor`` pods (``pod`` None when no such Pod is stored). 2 queries."""
    res = list(Reservation.objects.filter(claim_id__in=claim_ids).select_related("claim").only("claim_id", "name", "uid", "claim__cluster_id"))
    pods = {
        (p.cluster_id, p.uid): p
        for p in Pod.objects.filter(uid__in={r.uid for r in res}).only("uid", "name", "namespace", "cluster_id")
    }
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in res:
        out[r.claim_id].append({"name": r.name, "pod": pods.get((r.claim.cluster_id, r.uid))})
    return out
