"""Chargeback page: GPU-hours per namespace, team and GPU product over a window, allocated and
used, priced; a trend chart; CSV and JSON downloads of what the page shows (``?format=``).

Query parameters: ``cluster`` (default all), ``window`` (24h/7d/30d/90d, default 7d) or
``since``/``until`` (ISO 8601 date or time). The numbers come from
``claims.chargeback_data.build_report`` (rule: docs/chargeback.md).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import plotly.graph_objects as go
from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import content_disposition_header
from plotly.colors import qualitative

from inventory import listexport
from inventory.models import Cluster

from . import chargeback as cb
from .chargeback_data import DEFAULT_WINDOW, WINDOWS, build_report, window

# Fixed colours (never from cluster text).
_PALETTE = tuple(qualitative.Dark24)
#: Namespaces drawn one by one in the trend; the rest are summed as "other namespaces".
TREND_NAMESPACES = 12


def trend_figure(report: cb.Report) -> go.Figure:
    """Stacked bars: allocated GPU-hours per trend bucket and namespace (the largest
    ``TREND_NAMESPACES``, the others summed), x = bucket start (UTC)."""
    totals: dict[str, float] = {}
    for _, ns, v in report.trend:
        totals[ns] = totals.get(ns, 0.0) + v
    top = sorted(totals, key=lambda n: (-totals[n], n))[:TREND_NAMESPACES]
    series: dict[str, dict[str, float]] = {}
    for t, ns, v in report.trend:
        name = ns if ns in top else "other namespaces"
        bucket = series.setdefault(name, {})
        bucket[t.isoformat()] = bucket.get(t.isoformat(), 0.0) + v
    fig = go.Figure()
    for i, name in enumerate([*top, *(["other namespaces"] if "other namespaces" in series else [])]):
        points = sorted(series[name].items())
        fig.add_trace(go.Bar(
            x=[p[0] for p in points], y=[round(p[1], 4) for p in points], name=name,
            marker={"color": _PALETTE[i % len(_PALETTE)]},
        ))  # fmt: skip
    hours = report.bucket.total_seconds() / 3600
    fig.update_layout(
        barmode="stack", height=380, margin={"l": 50, "r": 10, "t": 40, "b": 50},
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},  # above the plot: the dates need the room below
        yaxis={"title": {"text": f"GPU-hours per {hours:g} h" if hours < 24 else f"GPU-hours per {hours / 24:g} d"}},
        xaxis={"range": [report.since.isoformat(), report.until.isoformat()]},
    )  # fmt: skip
    return fig


def _download(fmt: str, report: cb.Report, clusters: list[Cluster]) -> HttpResponse:
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cb.CSV_COLUMNS)
        for row in cb.csv_rows(report):
            w.writerow([listexport.csv_cell(v) for v in row])
        resp = HttpResponse(buf.getvalue(), content_type="text/csv; charset=utf-8")
    else:
        body = {"clusters": [c.name for c in clusters], **report.as_dict()}
        resp = HttpResponse(json.dumps(body), content_type="application/json")
    resp["Content-Disposition"] = content_disposition_header(True, f"claimscope-chargeback-{stamp}.{fmt}")
    resp["X-Content-Type-Options"] = "nosniff"
    return resp


def chargeback(request):
    """The page (login required, as every page: ``LoginRequiredMiddleware``)."""
    clusters = list(Cluster.objects.all())
    name = request.GET.get("cluster") or ""
    chosen = next((c for c in clusters if c.name == name), None)
    shown = [chosen] if chosen else clusters
    preset = request.GET.get("window") or DEFAULT_WINDOW
    ctx: dict[str, Any] = {
        "clusters": clusters, "chosen": chosen, "windows": list(WINDOWS), "window": preset if preset in WINDOWS else DEFAULT_WINDOW,
        "since_text": request.GET.get("since", ""), "until_text": request.GET.get("until", ""), "error": "",
    }  # fmt: skip
    # A value the page cannot read is refused, as the API refuses it: an unknown cluster
    # dropped would bill the whole fleet under a link that names one cluster.
    refused: dict[str, list[str]] = {}
    if name and chosen is None:
        refused["cluster"] = [f"No stored cluster named {name!r}."]
    if preset not in WINDOWS:
        refused["window"] = [f"{preset!r} is not one of {', '.join(WINDOWS)}."]
    if not refused:
        try:
            since, until = window(shown, request.GET.get("since"), request.GET.get("until"), preset)
        except ValueError as exc:
            refused["since, until"] = [f"Window not understood ({exc}); give ISO 8601 dates like 2026-11-01 or 2026-11-01T12:00:00Z."]
    fmt = listexport.requested(request)
    if refused:
        if fmt:
            return listexport.refusal(refused)
        ctx["error"] = " ".join(e for errs in refused.values() for e in errs) + " Nothing is counted."
        return render(request, "claims/chargeback.html", ctx, status=400)
    report, errors = build_report(shown, since, until)
    if fmt:
        return _download(fmt, report, shown)
    namespaces = report.namespaces()
    rows = report.rows
    known = sum(r.hours_measured + r.hours_estimated for r in rows)
    used = sum(r.used_gpu_hours for r in rows)
    costs = [r.cost for r in rows if r.cost is not None]
    ctx.update({
        "report": report, "since": since, "until": until, "errors": errors, "namespaces": namespaces,
        "teams": report.teams(), "team_label": settings.CLAIMSCOPE_CHARGEBACK_TEAM_LABEL,
        "teams_map": bool(settings.CLAIMSCOPE_CHARGEBACK_TEAMS),
        "show_teams": bool(settings.CLAIMSCOPE_CHARGEBACK_TEAM_LABEL or settings.CLAIMSCOPE_CHARGEBACK_TEAMS), "currency": report.currency,
        "total_gpu_hours": sum(r.gpu_hours for r in rows),
        "used_measured": sum(r.used_measured for r in rows), "used_estimated": sum(r.used_estimated for r in rows),
        "hours_unknown": sum(r.hours_unknown for r in rows),
        "idle_share": None if known <= 0 else max(0.0, 1 - used / known),
        "total_cost": sum(costs) if costs else None,
        "figure": trend_figure(report).to_plotly_json() if report.trend else None,
    })  # fmt: skip
    return render(request, "claims/chargeback.html", ctx)

