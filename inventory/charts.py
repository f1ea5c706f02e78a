"""Plotly figures and heatmap colours for DCGM telemetry.

Pure: no Django, no clock, no network. Inputs are ``inventory.prometheus.range_series`` results
(``[(labels incl. __name__, [(unix_s, value), ...]), ...]``) already narrowed to one device
(``device_figure``) or of the GPUs of one node with that node's devices (``node_figure``, which
attributes them with the DCGM join), and the window the caller chose; outputs are ``plotly.graph_objects.Figure`` objects (callers send
``fig.to_json()`` to the browser, which draws it with ``Plotly.newPlot``) or plain numbers.

Units follow dcgm-exporter's counter table (``inventory.dcgm.METRICS``): utilization percent,
framebuffer MiB, power W, temperature °C. ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` is a 0..1 ratio and
is charted as percent, because it is the only utilization DCGM produces per MIG instance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from inventory.dcgm import GPU_UTIL, GR_ACTIVE, join_samples, sample_from_labels
from inventory.parse import Device

FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
POWER = "DCGM_FI_DEV_POWER_USAGE"
TEMP = "DCGM_FI_DEV_GPU_TEMP"
XID = "DCGM_FI_DEV_XID_ERRORS"

#: Fields one device chart asks Prometheus for (one range query).
CHART_FIELDS: tuple[str, ...] = (GPU_UTIL, GR_ACTIVE, FB_USED, FB_FREE, POWER, TEMP, XID)

#: Window name -> seconds; the names are what the URL carries (``?window=6h``).
WINDOWS: Mapping[str, int] = {"1h": 3600, "6h": 6 * 3600, "24h": 24 * 3600, "7d": 7 * 24 * 3600}
DEFAULT_WINDOW = "1h"
#: Points per series a chart aims at: enough to show a 20 s load step in a 1 h window
#: (5 s step), far below Prometheus's 11,000-points-per-series limit for 7 d.
TARGET_POINTS = 720

#: Fields the node chart asks Prometheus for (one range query for all of a node's GPUs).
NODE_FIELDS: tuple[str, ...] = (GPU_UTIL, GR_ACTIVE, POWER)
#: Physical GPUs one node chart queries and draws at most (nodes have 8 or fewer, typically).
NODE_CHART_GPUS = 16
# Fixed colours (never from cluster text); a device's utilization and power lines share one.
_PALETTE: tuple[str, ...] = tuple(qualitative.Dark24)

Series = Sequence[tuple[Mapping[str, str], Sequence[tuple[float, float]]]]


def window_seconds(name: str | None) -> tuple[str, int]:
    """``(name, seconds)`` of a window name; unknown or missing names give the default."""
    if name in WINDOWS:
        return name, WINDOWS[name]  # type: ignore[index]
    return DEFAULT_WINDOW, WINDOWS[DEFAULT_WINDOW]


def step_seconds(window_s: int) -> int:
    """Range-query step for a window: ``window / TARGET_POINTS`` whole seconds, at least 1."""
    return max(1, window_s // TARGET_POINTS)


def heat_colour(util: float | None) -> str:
    """CSS colour for a heatmap cell: grey without data, pale green (idle) to dark red (100 %).

    Built from numbers only (never from cluster text), so it is safe in a ``style`` attribute.
    """
    if util is None or math.isnan(util):
        return "#e5e7eb"
    u = min(max(util, 0.0), 100.0) / 100.0
    hue = round(130 - 130 * u)  # 130 green -> 0 red
    light = round(88 - 40 * u)
    return f"hsl({hue},70%,{light}%)"


def chart_title(name: str, window: str) -> str:
    """A two-line chart title: ``name`` (cluster text: node and device names, escaped, since
    plotly reads a few HTML tags in titles) over a smaller ``window`` line (our own text), so
    a phone-width chart does not cut the window off."""
    from html import escape

    return f"{escape(name)}<br><sup>{escape(window)}</sup>"


def series_for_device(series: Series, device: Device, neighbours: Iterable[Device]) -> Series:
    """The range series that belong to ``device``, decided by the same join the poll uses.

    ``neighbours``: the devices sharing its GPU (same ``uuid``/``parentUUID``), so a MIG series
    that could be any of several instances of one profile is not charted on one of them.
    """
    devices = [device, *(d for d in neighbours if d.key != device.key)]
    out = []
    for labels, points in series:
        name = labels.get("__name__", "")
        sample = sample_from_labels(name, labels, 0.0, None)
        if sample is None:
            continue
        joined = join_samples([sample], devices)
        if device.key in joined.by_device:
            out.append((labels, points))
    return out


def _by_field(series: Series) -> dict[str, list[tuple[float, float]]]:
    # Several series of one field (e.g. an old and a new pod label set) are merged by time.
    merged: dict[str, dict[float, float]] = {}
    for labels, points in series:
        field = labels.get("__name__", "").upper()
        bucket = merged.setdefault(field, {})
        for ts, v in points:
            bucket[ts] = v
    return {f: sorted(b.items()) for f, b in merged.items()}


def _times(points: Sequence[tuple[float, float]]) -> list[str]:
    return [datetime.fromtimestamp(ts, tz=UTC).isoformat() for ts, _ in points]


def _values(points: Sequence[tuple[float, float]], scale: float = 1.0) -> list[float | None]:
    # NaN is not JSON: a gap in the line.
    return [None if math.isnan(v) else v * scale for _, v in points]


def xid_events(points: Sequence[tuple[float, float]]) -> list[tuple[float, int]]:
    """``(unix_s, xid)`` where ``DCGM_FI_DEV_XID_ERRORS`` (last XID code, 0 = none) changes to
    a non-zero code; a code that stays the same is one event, not one per step."""
    out: list[tuple[float, int]] = []
    prev = 0.0
    for ts, v in points:
        if math.isnan(v):
            continue
        if v and v != prev:
            out.append((ts, int(v)))
        prev = v
    return out


def device_figure(series: Series, *, start: datetime, end: datetime, title: str = "", per_gpu_note: str = "") -> go.Figure:
    """Four stacked charts sharing the time axis: utilization (%), framebuffer used vs total
    (MiB, total = FB_USED + FB_FREE), power (W), temperature (°C). XID errors are red markers
    with the code on the utilization chart. Empty series still give the four axes, so the page
    can say "no series in this window" beside a blank chart; a panel without a line says so
    inside it, with ``per_gpu_note`` for power and temperature (a MIG instance: DCGM reports
    those per physical GPU).
    """
    fields = _by_field(series)
    fig = make_subplots(
        rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.06,
        subplot_titles=("Utilization (%)", "Framebuffer memory (MiB)", "Power (W)", "Temperature (°C)"),
    )  # fmt: skip
    if GPU_UTIL in fields:
        pts = fields[GPU_UTIL]
        fig.add_trace(go.Scatter(x=_times(pts), y=_values(pts), name="GPU utilization (DCGM_FI_DEV_GPU_UTIL)", mode="lines"), row=1, col=1)
    if GR_ACTIVE in fields:
        pts = fields[GR_ACTIVE]
        fig.add_trace(
            go.Scatter(x=_times(pts), y=_values(pts, 100.0), name="Graphics engine active (DCGM_FI_PROF_GR_ENGINE_ACTIVE)", mode="lines"),
            row=1, col=1,
        )  # fmt: skip
    if FB_USED in fields:
        used = fields[FB_USED]
        fig.add_trace(go.Scatter(x=_times(used), y=_values(used), name="FB used", mode="lines", fill="tozeroy"), row=2, col=1)
        free = dict(fields.get(FB_FREE, []))
        total = [(ts, v + free[ts]) for ts, v in used if ts in free]
        if total:
            fig.add_trace(go.Scatter(x=_times(total), y=_values(total), name="FB total (used + free)", mode="lines", line={"dash": "dot"}), row=2, col=1)
    if POWER in fields:
        pts = fields[POWER]
        fig.add_trace(go.Scatter(x=_times(pts), y=_values(pts), name="Power (DCGM_FI_DEV_POWER_USAGE)", mode="lines"), row=3, col=1)
    if TEMP in fields:
        pts = fields[TEMP]
        fig.add_trace(go.Scatter(x=_times(pts), y=_values(pts), name="Temperature (DCGM_FI_DEV_GPU_TEMP)", mode="lines"), row=4, col=1)
    events = xid_events(fields.get(XID, []))
    if events:
        fig.add_trace(
            go.Scatter(
                x=[datetime.fromtimestamp(ts, tz=UTC).isoformat() for ts, _ in events], y=[100.0] * len(events),
                text=[f"XID {code}" for _, code in events], mode="markers+text", textposition="top center",
                marker={"color": "#c53030", "size": 10, "symbol": "x"}, name="XID error (DCGM_FI_DEV_XID_ERRORS)",
            ),
            row=1, col=1,
        )  # fmt: skip
    drawn = {(t.xaxis or "x") for t in fig.data}
    for row, axis in enumerate(("x", "x2", "x3", "x4"), start=1):
        if axis not in drawn and fields:
            note = per_gpu_note if per_gpu_note and row >= 3 else "no series in this window"
            lo, hi = fig.layout[f"yaxis{'' if row == 1 else row}"].domain
            fig.add_annotation(text=note, xref="paper", yref="paper", x=0.5, y=(lo + hi) / 2, showarrow=False,
                               font={"color": "#6b7280"})  # fmt: skip
    fig.update_xaxes(range=[start.isoformat(), end.isoformat()])
    fig.update_yaxes(range=[0, 105], row=1, col=1)
    # From zero: a steady 590-594 W or 54-56 °C would otherwise fill the axis and look jumpy.
    fig.update_yaxes(rangemode="tozero", row=3, col=1)
    fig.update_yaxes(rangemode="tozero", row=4, col=1)
    fig.update_layout(
        title=title or None, height=740, margin={"l": 50, "r": 20, "t": 80, "b": 30},
        legend={"orientation": "h"}, template="plotly_white",
    )  # fmt: skip
    return fig


def _merge(into: dict[float, float], points: Sequence[tuple[float, float]]) -> None:
    for ts, v in points:
        into[ts] = v


def device_label(device: Device) -> str:
    """Legend name of a device: its slice name, plus ``(profile)`` for a MIG instance."""
    return f"{device.name} ({device.profile})" if device.parent_uuid and device.profile else device.name


def node_figure(series: Series, devices: Sequence[Device], *, start: datetime, end: datetime, title: str = "") -> go.Figure:
    """Two stacked charts sharing the time axis for the GPUs of one node, one line per device.

    ``series``: ``range_series`` results of ``NODE_FIELDS`` for the node's physical GPUs
    (labels incl. ``__name__``). ``devices``: the node's GPU and MIG devices, in the order the
    legend should list them (all instances of each GPU: the join needs them to tell MIG
    instances apart). Each series is attributed with ``dcgm.join_samples``, like a poll;
    series the join cannot place are left out.

    Top, utilization in percent: ``DCGM_FI_DEV_GPU_UTIL`` for a whole GPU (falling back to
    ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` x 100 when the exporter sends only profiling fields),
    ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` x 100 for a MIG instance (DCGM has no per-instance
    GPU_UTIL), named ``<device> (<profile>)``. Bottom, ``DCGM_FI_DEV_POWER_USAGE`` in W per
    physical GPU: a whole GPU's line shares its colour and legend entry; a GPU in MIG mode
    (published only as MIG devices, so its whole-GPU series match no device) gets its own line
    named after the exporter's ``gpu`` index. Several series of one device and field (e.g. an
    old and a new pod label set) are merged by time. No series gives the two empty axes.
    """
    devices = list(devices)
    fields: dict[tuple[str, str, str], dict[str, dict[float, float]]] = {}
    parents = {d.parent_uuid for d in devices if d.parent_uuid}
    mig_mode_power: dict[str, tuple[tuple[int, str], str, dict[float, float]]] = {}
    for labels, points in series:
        sample = sample_from_labels(labels.get("__name__", ""), labels, 0.0, None)
        if sample is None or sample.field not in NODE_FIELDS:
            continue
        joined = join_samples([sample], devices)
        if joined.by_device:
            (key,) = joined.by_device
            _merge(fields.setdefault(key, {}).setdefault(sample.field, {}), points)
        elif sample.field == POWER and not sample.is_mig and sample.uuid in parents:
            index = sample.gpu_index or ""
            name = f"GPU {index} (MIG mode)" if index else f"{sample.uuid} (MIG mode)"
            order = (int(index) if index.isdigit() else 1 << 30, name)
            _merge(mig_mode_power.setdefault(sample.uuid or "", (order, name, {}))[2], points)

    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4],
        subplot_titles=(
            "Utilization (%): DCGM_FI_DEV_GPU_UTIL, MIG instances DCGM_FI_PROF_GR_ENGINE_ACTIVE x 100",
            "Power (W): DCGM_FI_DEV_POWER_USAGE per GPU",
        ),
    )  # fmt: skip
    colour_at = 0
    for d in devices:
        got = fields.get(d.key)
        if not got:
            continue
        colour = _PALETTE[colour_at % len(_PALETTE)]
        colour_at += 1
        name, group = device_label(d), "/".join(d.key)
        if d.parent_uuid or GPU_UTIL not in got:
            field, scale = GR_ACTIVE, 100.0
        else:
            field, scale = GPU_UTIL, 1.0
        shown = False
        if field in got:
            pts = sorted(got[field].items())
            fig.add_trace(
                go.Scatter(
                    x=_times(pts), y=_values(pts, scale), name=name, legendgroup=group, mode="lines",
                    line={"color": colour}, hovertemplate=f"%{{y:.1f}} % ({field})",
                ),
                row=1, col=1,
            )  # fmt: skip
            shown = True
        if POWER in got and not d.parent_uuid:
            pts = sorted(got[POWER].items())
            fig.add_trace(
                go.Scatter(
                    x=_times(pts), y=_values(pts), name=name, legendgroup=group, showlegend=not shown, mode="lines",
                    line={"color": colour}, hovertemplate=f"%{{y:.0f}} W ({POWER})",
                ),
                row=2, col=1,
            )  # fmt: skip
    for _, name, bucket in sorted(mig_mode_power.values(), key=lambda v: v[0]):
        pts = sorted(bucket.items())
        colour = _PALETTE[colour_at % len(_PALETTE)]
        colour_at += 1
        fig.add_trace(
            go.Scatter(
                x=_times(pts), y=_values(pts), name=name, mode="lines", line={"color": colour, "dash": "dot"},
                hovertemplate=f"%{{y:.0f}} W ({POWER})",
            ),
            row=2, col=1,
        )  # fmt: skip
    fig.update_xaxes(range=[start.isoformat(), end.isoformat()])
    fig.update_yaxes(title_text="%", range=[0, 105], row=1, col=1)
    fig.update_yaxes(title_text="W", rangemode="tozero", row=2, col=1)
    fig.update_layout(
        title=title or None, height=640, margin={"l": 55, "r": 20, "t": 90, "b": 30},
        legend={"orientation": "h"}, template="plotly_white",
    )  # fmt: skip
    return fig


def mean(points: Iterable[tuple[float, float]]) -> float | None:
    """Mean of the non-NaN values, None when there are none."""
    vals = [v for _, v in points if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None
