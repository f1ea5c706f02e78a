"""Thin client for reading DCGM series from Prometheus (``prometheus-api-client``).

No Django. Two calls: ``latest_samples`` (instant query, ``/api/v1/query``) and
``range_series`` (``/api/v1/query_range``). Every failure to get an answer - connection refused,
DNS, timeout, non-200 status, a body that is not the expected JSON - raises one exception,
``MetricsUnavailable``, whose message says what went wrong and where; callers show it and keep
the last stored values.

PromQL is built only from DCGM field names checked against the Prometheus metric-name grammar
and from label matchers whose names are checked against the label-name grammar and whose values
are escaped as PromQL double-quoted strings (``\\``, ``"`` and newlines), so label values
read from a cluster never change the query's structure.

Prometheus instant queries return a series only if it has a sample within the lookback window
(5 minutes by default) before the query time: for backfilled or old data pass ``at``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from prometheus_api_client.exceptions import PrometheusApiClientException
from prometheus_api_client.prometheus_connect import PrometheusConnect
from urllib3.util.retry import Retry

from inventory.dcgm import DEFAULT_FIELDS, DcgmSample, from_query_result
from inventory.kube import is_unix_time

# Fixed grammars from the Prometheus data model (not built from input).
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

DEFAULT_TIMEOUT_S = 10.0


class MetricsUnavailable(Exception):
    """Prometheus could not be asked or did not answer usefully (message says why)."""


def escape_label_value(value: str) -> str:
    """``value`` as a PromQL double-quoted string literal, quotes included."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def label_matchers(matchers: Mapping[str, str] | None) -> str:
    """``{a="x",b="y"}`` equality matchers; ``""`` for none. Raises ``ValueError`` on a bad name."""
    if not matchers:
        return ""
    parts = []
    for name, value in matchers.items():
        if not _LABEL_NAME.fullmatch(name):
            raise ValueError(f"not a Prometheus label name: {name!r}")
        parts.append(f"{name}={escape_label_value(str(value))}")
    return "{" + ",".join(parts) + "}"


def fields_selector(fields: Iterable[str], matchers: Mapping[str, str] | None = None) -> str:
    """A selector for several DCGM fields at once: ``{__name__=~"A|B",label="v"}``.

    Field names must be Prometheus metric names (they contain no regex metacharacters, so the
    alternation is literal); anything else raises ``ValueError``.
    """
    names = list(dict.fromkeys(fields))
    if not names:
        raise ValueError("no DCGM fields to query")
    for n in names:
        if not _METRIC_NAME.fullmatch(n):
            raise ValueError(f"not a Prometheus metric name: {n!r}")
    inner = label_matchers(matchers)[1:-1]
    name_re = escape_label_value("|".join(names))
    return "{__name__=~" + name_re + ("," + inner if inner else "") + "}"


def fields_selector_any(fields: Iterable[str], label: str, values: Iterable[str]) -> str:
    """``fields_selector(fields, {label: v1}) or fields_selector(fields, {label: v2}) ...``:
    the series of ``fields`` whose ``label`` equals any of ``values`` (duplicates dropped, order
    kept). One equality matcher per value, never a regex alternation, so values read from a
    cluster cannot widen the match. Raises ``ValueError`` for no values or a bad name.
    """
    unique = list(dict.fromkeys(str(v) for v in values))
    if not unique:
        raise ValueError(f"no {label} values to select")
    return " or ".join(fields_selector(fields, {label: v}) for v in unique)


def _client(url: str, timeout_s: float) -> PrometheusConnect:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise MetricsUnavailable(f"Prometheus URL must start with http:// or https://: {url!r}")
    # No retries: a poll runs again on its own schedule, and a dead endpoint must fail fast.
    return PrometheusConnect(
        url=url.rstrip("/"), disable_ssl=False, retry=Retry(total=0, raise_on_status=False),
        timeout=timeout_s,
    )


def _unix(t: datetime) -> float:
    # Naive datetimes are taken as UTC (the project stores UTC).
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def _call(url: str, what: str, fn: Any) -> Any:
    try:
        return fn()
    except requests.exceptions.JSONDecodeError as exc:  # also a RequestException; say what it is
        raise MetricsUnavailable(f"Prometheus at {url} sent an unreadable answer to {what}") from exc
    except requests.exceptions.Timeout as exc:
        raise MetricsUnavailable(f"Prometheus at {url} timed out ({what})") from exc
    except requests.exceptions.RequestException as exc:
        raise MetricsUnavailable(f"cannot reach Prometheus at {url} ({what}): {exc}") from exc
    except PrometheusApiClientException as exc:
        raise MetricsUnavailable(f"Prometheus at {url} refused {what}: {str(exc)[:300]}") from exc
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError is a ValueError
        raise MetricsUnavailable(f"Prometheus at {url} sent an unreadable answer to {what}") from exc


def query_vector(
    url: str, promql: str, at: datetime | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[dict[str, Any]]:
    """Raw ``data.result`` of an instant query (``[{"metric": {...}, "value": [ts, "v"]}]``)."""
    client = _client(url, timeout_s)
    params = {"time": f"{_unix(at):.3f}"} if at is not None else None
    try:
        result = _call(url, "instant query", lambda: client.custom_query(promql, params=params))
    finally:
        client.close()
    if not isinstance(result, list):
        raise MetricsUnavailable(f"Prometheus at {url} answered the instant query with no vector")
    return result


def latest_samples(
    url: str,
    fields: Sequence[str] = DEFAULT_FIELDS,
    at: datetime | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    matchers: Mapping[str, str] | None = None,
) -> list[DcgmSample]:
    """Latest value of each DCGM ``fields`` series at ``at`` (default: Prometheus's now).

    ``matchers``: optional label equality filters (e.g. ``{"Hostname": "gpu-node-1"}``),
    escaped. Returns ``DcgmSample`` with Prometheus's evaluation time as ``timestamp``
    (Unix seconds). Only series with a sample in the 5 minutes before ``at`` come back.
    Raises ``MetricsUnavailable``; ``ValueError`` for a field or label name that is not valid.
    """
    result = query_vector(url, fields_selector(fields, matchers), at, timeout_s)
    try:
        return from_query_result(result)
    except ValueError as exc:
        raise MetricsUnavailable(f"Prometheus at {url} sent malformed samples: {exc}") from exc


def _step(step: float | str | timedelta) -> str:
    if isinstance(step, timedelta):
        step = step.total_seconds()
    if isinstance(step, int | float):
        if not step > 0 or math.isinf(step):
            raise ValueError(f"step must be a positive number of seconds, got {step!r}")
        return f"{step:g}s"
    return str(step)


def range_series(
    url: str,
    promql: str,
    start: datetime,
    end: datetime,
    step: float | str | timedelta,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:
    """A range query: one ``(labels incl. __name__, [(unix_s, value), ...])`` per series.

    ``promql`` should be built with ``fields_selector``/``label_matchers`` when it carries
    cluster text. ``start``/``end`` are sent as whole Unix seconds (the client rounds);
    ``step`` is seconds, a ``timedelta`` or a Prometheus duration string (``"15s"``).
    Values are floats in the field's unit; NaN (``"NaN"``) is kept as ``math.nan``.
    Raises ``MetricsUnavailable``.
    """
    client = _client(url, timeout_s)
    step_s = _step(step)
    try:
        result = _call(
            url,
            "range query",
            lambda: client.custom_query_range(promql, start_time=start, end_time=end, step=step_s),
        )
    finally:
        client.close()
    out: list[tuple[dict[str, str], list[tuple[float, float]]]] = []
    try:
        for entry in result:
            labels = {str(k): str(v) for k, v in (entry.get("metric") or {}).items()}
            points = [(t, float(v)) for ts, v in entry.get("values") or [] if is_unix_time(t := float(ts))]
            out.append((labels, points))
    except (AttributeError, TypeError, ValueError) as exc:
        raise MetricsUnavailable(f"Prometheus at {url} sent a malformed matrix") from exc
    return out
