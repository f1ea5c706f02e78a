"""CSV and JSON downloads of a list page, with the page's current filters (``?format=csv|json``).

A list view hands over its filtered queryset, its columns and a hook that attaches what rows
need besides their own columns (holders, findings). Rows are streamed in chunks of
``CHUNK``: memory and the number of queries per chunk stay fixed however long the list is
(a 5,000-node fleet has ~90,000 devices), and the hook runs once per chunk, never per row.

Cluster text is untrusted. CSV cells that a spreadsheet would read as a formula (starting
with ``=``, ``+``, ``-``, ``@``, tab or carriage return) are prefixed with ``'``; JSON is
written by ``json.dumps`` (never by hand).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header

FORMATS = ("csv", "json")
CHUNK = 500
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Column:
    """``key``: the JSON key and CSV header. ``value(row)``: a str, number, bool, None,
    datetime (written ISO 8601) or a list of those (CSV joins them with ``"; "``)."""

    key: str
    value: Callable[[Any], Any]


def requested(request) -> str | None:
    """``csv`` or ``json`` when the request asks for a download, else None (the page)."""
    fmt = request.GET.get("format", "")
    return fmt if fmt in FORMATS else None


def refused(f) -> HttpResponse | None:
    """A 400 naming each invalid value of the FilterSet ``f`` (an unknown state, a term too
    long), for a download asked with one: an empty file would read as "nothing matches"."""
    if not f.is_bound or f.is_valid():
        return None
    return refusal({name: [str(e) for e in errs] for name, errs in f.errors.items()})


def refusal(errors: dict[str, list[str]]) -> HttpResponse:
    """The 400 of a download asked with invalid parameters: parameter -> its errors."""
    lines = [f"{name}: {'; '.join(errs)}" for name, errs in errors.items()]
    return HttpResponse("Invalid filter; nothing exported.\n" + "\n".join(lines) + "\n", status=400,
                        content_type="text/plain; charset=utf-8")


def _plain(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def csv_cell(v: Any) -> str:
    """One CSV cell: lists joined by ``"; "``, None empty, formula-looking text defused."""
    v = _plain(v)
    if isinstance(v, list):
        text = "; ".join("" if x is None else str(x) for x in v)
    elif v is None:
        text = ""
    elif isinstance(v, bool):
        text = "true" if v else "false"
    else:
        text = str(v)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _chunks(rows: Iterable[Any], hook: Callable[[list[Any]], None] | None) -> Iterator[Any]:
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) == CHUNK:
            if hook:
                hook(batch)
            yield from batch
            batch = []
    if batch:
        if hook:
            hook(batch)
        yield from batch


def _csv(rows: Iterator[Any], columns: Sequence[Column]) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf)

    def flush() -> str:
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        return text

    writer.writerow([c.key for c in columns])
    yield flush()
    for i, row in enumerate(rows, 1):
        writer.writerow([csv_cell(c.value(row)) for c in columns])
        if i % 100 == 0:
            yield flush()
    yield flush()


def _json(rows: Iterator[Any], columns: Sequence[Column]) -> Iterator[str]:
    yield "["
    for i, row in enumerate(rows):
        yield ("," if i else "") + json.dumps({c.key: _plain(c.value(row)) for c in columns}, separators=(",", ":"))
    yield "]\n"


def response(fmt: str, name: str, queryset, columns: Sequence[Column],
             hook: Callable[[list[Any]], None] | None = None) -> StreamingHttpResponse:
    """The download of ``queryset`` (already filtered and ordered) as ``fmt``, named
    ``claimscope-<name>-<UTC time>.<fmt>``. ``hook(rows)`` runs on each chunk of rows."""
    rows = _chunks(queryset.iterator(chunk_size=CHUNK), hook)
    body = _csv(rows, columns) if fmt == "csv" else _json(rows, columns)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"
    resp = StreamingHttpResponse(body, content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    resp["Content-Disposition"] = content_disposition_header(True, f"claimscope-{name}-{stamp}.{fmt}")
    resp["X-Content-Type-Options"] = "nosniff"
    return resp
