"""Recorded DCGM history: Prometheus range-query results carried in a snapshot.

Pure: no Django, no clock, no network. A snapshot folder may hold, beside its ``*.prom``
scrapes, files named ``*.range.json``: each the JSON body that Prometheus's
``/api/v1/query_range`` returns (``{"status": "success", "data": {"resultType": "matrix",
"result": [{"metric": {...labels incl. __name__}, "values": [[unix_s, "value"], ...]}]}}``),
e.g. saved with ``curl .../api/v1/query_range?query=...`` during an incident. For snapshot
clusters the charts read these series instead of asking a Prometheus.

Bounds (a breach is a named problem of the file; what fits is kept): a file over
``MAX_FILE_BYTES`` is not read (``snapshot.py`` checks it before reading); at most
``MAX_SERIES`` series per file and ``MAX_POINTS`` points per series (Prometheus's own
11,000-points limit of one range query). Only DCGM series (``__name__`` a DCGM field,
``DCGM_FI_*``, lower-cased relabelled names are upper-cased) are kept: the file may hold other
series, which this product does not chart (skipped silently: they are not damage). Label names and values are kept as strings, never
interpreted; values are floats in the DCGM field's unit, ``"NaN"`` -> ``math.nan``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from .kube import is_unix_time

RANGE_SUFFIX = ".range.json"
MAX_FILE_BYTES = 32 * 2**20
MAX_SERIES = 5_000
MAX_POINTS = 11_000
#: Label values longer than this are cut (a label is a name or a UUID; 1 KiB is generous).
MAX_LABEL_CHARS = 1024

Points = list[tuple[float, float]]
Series = list[tuple[dict[str, str], Points]]


@dataclass
class RangeFile:
    """What one ``*.range.json`` file holds: ``series`` ``[(labels, [(unix_s, value), ...])]``
    (labels incl. ``__name__``, points sorted by time) and ``problems`` (one message each,
    starting with the file name)."""

    series: Series = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def is_range_file(name: str) -> bool:
    """True for a file name ending in ``.range.json`` (case-insensitive)."""
    return name.lower().endswith(RANGE_SUFFIX)


def _points(raw: Any) -> Points | None:
    if not isinstance(raw, list):
        return None
    out: Points = []
    for p in raw:
        if not isinstance(p, list | tuple) or len(p) != 2:
            return None
        ts, v = p
        try:
            t, x = float(ts), float(v)
        except (TypeError, ValueError):
            return None
        if not is_unix_time(t):
            return None
        out.append((t, x))
    out.sort(key=lambda tv: tv[0])
    return out


def parse_range_result(data: bytes | str, name: str) -> RangeFile:
    """Series of one query_range answer. Never raises for bad input: an unreadable file, an
    error answer (``status`` not ``success``), a result that is not a ``matrix``, a malformed
    series or one over the bounds is a problem in ``RangeFile.problems``."""
    out = RangeFile()
    if len(data) > MAX_FILE_BYTES:
        out.problems.append(f"{name}: {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit of a range file; not read")
        return out
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        out.problems.append(f"{name}: not a Prometheus range-query answer: invalid JSON ({str(exc)[:200]})")
        return out
    if not isinstance(doc, dict):
        out.problems.append(f"{name}: not a Prometheus range-query answer (a {type(doc).__name__}, not an object)")
        return out
    if doc.get("status") != "success":
        err = doc.get("error") if isinstance(doc.get("error"), str) else ""
        out.problems.append(f"{name}: the range query did not succeed (status {str(doc.get('status'))[:40]!r}{': ' + err[:200] if err else ''})")
        return out
    body = doc.get("data")
    if not isinstance(body, dict) or body.get("resultType") != "matrix" or not isinstance(body.get("result"), list):
        out.problems.append(f"{name}: not a range-query answer (data.resultType must be 'matrix' with a result list)")
        return out
    result = body["result"]
    if len(result) > MAX_SERIES:
        out.problems.append(f"{name}: {len(result):,} series, over the limit of {MAX_SERIES:,}; the first {MAX_SERIES:,} are kept")
        result = result[:MAX_SERIES]
    for i, entry in enumerate(result):
        metric = entry.get("metric") if isinstance(entry, dict) else None
        if not isinstance(metric, dict):
            out.problems.append(f"{name}: series {i} has no metric labels; skipped")
            continue
        labels = {str(k)[:MAX_LABEL_CHARS]: str(v)[:MAX_LABEL_CHARS] for k, v in metric.items()}
        metric_name = labels.get("__name__", "").upper()
        if not metric_name.startswith("DCGM_FI_"):
            continue  # not charted; not damage either (a query may select other series)
        labels["__name__"] = metric_name
        raw = entry.get("values")
        if isinstance(raw, list) and len(raw) > MAX_POINTS:
            out.problems.append(f"{name}: series {i} ({metric_name}) has {len(raw):,} points, over {MAX_POINTS:,}; the last {MAX_POINTS:,} are kept")
            raw = raw[-MAX_POINTS:]
        points = _points(raw)
        if points is None:
            out.problems.append(f"{name}: series {i} ({metric_name}) has malformed values (want [[unix_s, \"value\"], ...]); skipped")
            continue
        out.series.append((labels, points))
    return out


def window(points: Points, start_s: float, end_s: float) -> Points:
    """The points with ``start_s <= t <= end_s`` (Unix seconds), in time order."""
    return [(t, v) for t, v in points if start_s <= t <= end_s]


def to_json_points(points: Points) -> list[list[float | None]]:
    """Points as JSON can hold them: NaN and infinities (a gap in the line) become ``None``."""
    return [[t, v if math.isfinite(v) else None] for t, v in points]


def from_json_points(raw: Any) -> Points:
    """``to_json_points`` read back (``None`` -> NaN); malformed entries are skipped."""
    out: Points = []
    for p in raw if isinstance(raw, list) else []:
        if isinstance(p, list) and len(p) == 2 and isinstance(p[0], int | float):
            out.append((float(p[0]), math.nan if p[1] is None else float(p[1])))
    return out
