"""Store the latest DCGM values on devices: from snapshot scrapes or a Prometheus poll.

The pure parsing and join live in ``inventory.dcgm``; this module adapts rows to it and
writes ``Device.metrics`` (DCGM field name -> value in the field's unit), ``metrics_at`` and
``metrics_pod`` (``ns/name`` from the exporter's pod labels), plus unmatched series.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import parse as dcgm_parse
from .bulk import update_rows
from .models import Cluster, Device, RecordedSeries, SourceKind, UnmatchedSeries
from .reconcile import BULK

log = logging.getLogger(__name__)


def store_samples(cluster: Cluster, samples, observed_at: datetime | None = None) -> dict[str, int]:
    """Join ``samples`` (``dcgm.DcgmSample``) to the cluster's devices and store latest values.

    Devices without a series keep no stale values: their ``metrics`` become ``{}``.
    Returns ``{"matched_devices": n, "unmatched_series": m}``.
    """
    from . import dcgm

    # Only what the join reads and what is stored back: loading each device's slice (its raw
    # JSON, once per device) made a poll of a 1,000-node cluster take 20 s and 4 GB.
    rows = list(Device.objects.filter(cluster=cluster).only(*JOIN_FIELDS, "metrics", "metrics_at", "metrics_pod"))
    by_key = {(d.driver, d.pool, d.name): d for d in rows}
    joined = dcgm.join_samples(samples, [join_device(d) for d in rows])
    changed = []
    for key, dev in by_key.items():
        t = joined.by_device.get(key)
        values = dict(t.values) if t else {}
        at = None
        if t and t.at:
            at = datetime.fromisoformat(t.at.replace("Z", "+00:00"))
        elif t:
            at = observed_at or timezone.now()
        pod = (t.pod or "") if t else ""
        if values != dev.metrics or at != dev.metrics_at or pod != dev.metrics_pod:
            dev.metrics, dev.metrics_at, dev.metrics_pod = values, at, pod
            changed.append(dev)
    with transaction.atomic():
        update_rows(Device, ["metrics", "metrics_at", "metrics_pod"],
                    [(d.pk, {"metrics": d.metrics, "metrics_at": d.metrics_at, "metrics_pod": d.metrics_pod}) for d in changed])
        UnmatchedSeries.objects.filter(cluster=cluster).delete()
        UnmatchedSeries.objects.bulk_create(
            [
                UnmatchedSeries(cluster=cluster, field=s.field, labels=dict(s.labels), value=s.value, reason=reason)
                for s, reason in joined.unmatched
            ],
            batch_size=BULK,
        )
        newest = max((d.metrics_at for d in by_key.values() if d.metrics_at), default=None)
        Cluster.objects.filter(pk=cluster.pk).update(metrics_at=newest, metrics_error="")
    return {"matched_devices": len(joined.by_device), "unmatched_series": len(joined.unmatched)}


def store_scrapes(cluster: Cluster, prom: dict[str, str], observed_at: datetime | None = None) -> dict[str, int]:
    """Parse every scrape of a snapshot folder and store the values (file mtime unknown: the
    samples' own timestamps, else ``observed_at``, else the sync time, are recorded). A malformed sample line is
    skipped and counted (``skipped_lines``; the first ones are logged with file and line),
    never a failure of the scrape or the sync."""
    from . import dcgm

    samples = []
    skipped = 0
    for name, text in prom.items():
        scrape = dcgm.parse_scrape(text)
        samples.extend(scrape.samples)
        skipped += scrape.skipped
        for problem in scrape.problems:
            log.warning("%s: %s: %s (skipped)", cluster.name, name, problem)
    return {**store_samples(cluster, samples, observed_at=observed_at or datetime.now(UTC)), "skipped_lines": skipped}


STALE_AFTER = timedelta(minutes=5)
#: Recorded series one cluster keeps at most (a 1,000-GPU fleet's seven chart fields).
MAX_RECORDED_SERIES = 10_000


def store_ranges(cluster: Cluster, ranges: dict[str, list], *, complete: bool = True) -> dict[str, int]:
    """Replace the cluster's recorded DCGM history with the series of a snapshot's
    ``*.range.json`` files (``SnapshotLoad.ranges``: file name -> ``[(labels, points)]``).

    A snapshot without range files clears what an earlier one recorded; the same series again
    write nothing (a no-change re-sync stays read-only). A read with problems (``complete``
    False) replaces only the series of the files it read: a file it could not read keeps what
    an earlier sync recorded from it. Series beyond
    ``MAX_RECORDED_SERIES`` are dropped (counted in ``dropped_series``, logged); series with
    no points are not stored. Returns ``{"recorded_series": n, "dropped_series": m}``.
    """
    from .telemetry_range import to_json_points

    rows = []
    dropped = 0
    for name in sorted(ranges):
        for labels, points in ranges[name]:
            if not points:
                continue
            if len(rows) >= MAX_RECORDED_SERIES:
                dropped += 1
                continue
            uuid = labels.get("UUID") or labels.get("uuid") or ""
            rows.append(RecordedSeries(
                cluster=cluster, field=labels.get("__name__", ""), uuid=uuid, labels=dict(labels),
                points=to_json_points(points), start_s=points[0][0], end_s=points[-1][0], source=name,
            ))  # fmt: skip
    if dropped:
        log.warning("%s: %d recorded series over the limit of %d not stored", cluster.name, dropped, MAX_RECORDED_SERIES)
    stored = RecordedSeries.objects.filter(cluster=cluster)
    out = {"recorded_series": len(rows), "dropped_series": dropped}
    if not complete:
        with transaction.atomic():
            stored.filter(source__in=sorted(ranges)).delete()
            RecordedSeries.objects.bulk_create(rows, batch_size=BULK)
        return out
    # A re-sync of the same snapshot writes nothing (reads only): no rows to drop, or the same.
    if not rows:
        if stored.exists():
            stored.delete()
        return out
    same = [(r.source, r.field, r.uuid, r.labels, r.points) for r in stored.order_by("pk")]
    if same == [(r.source, r.field, r.uuid, r.labels, r.points) for r in rows]:
        return out
    with transaction.atomic():
        stored.delete()
        RecordedSeries.objects.bulk_create(rows, batch_size=BULK)
    return out


def recorded_end(cluster: Cluster) -> datetime | None:
    """Time of the newest recorded point of the cluster (``RecordedSeries.end_s``), None when
    it has no recorded history. One query. A chart of a snapshot cluster ends here by default,
    so recorded history shows whatever the clock says now."""
    from django.db.models import Max

    end = RecordedSeries.objects.filter(cluster=cluster).aggregate(m=Max("end_s"))["m"]
    return datetime.fromtimestamp(end, tz=UTC) if end is not None else None


def has_history(cluster: Cluster) -> bool:
    """Can this cluster's devices be charted: a Prometheus is configured, or a snapshot brought
    recorded series. At most one query (none for a polled cluster)."""
    return bool(prometheus_url_for(cluster)) or RecordedSeries.objects.filter(cluster=cluster).exists()


def recorded_series(cluster: Cluster, uuids: list[str], fields, start: datetime, end: datetime):
    """Recorded series of ``fields`` for the GPUs ``uuids`` (``UUID`` label), cut to
    ``[start, end]``: ``[(labels incl. __name__, [(unix_s, value), ...])]`` like
    ``prometheus.range_series``. Series with no point in the window are left out. One query."""
    from .telemetry_range import from_json_points, window

    lo, hi = start.timestamp(), end.timestamp()
    qs = RecordedSeries.objects.filter(cluster=cluster, uuid__in=uuids, field__in=list(fields), start_s__lte=hi, end_s__gte=lo)
    out = []
    for row in qs.order_by("pk").only("labels", "points"):
        points = window(from_json_points(row.points), lo, hi)
        if points:
            out.append((dict(row.labels), points))
    return out


def prometheus_url_for(cluster: Cluster) -> str:
    """The Prometheus a cluster's DCGM series are read from, ``""`` for none.

    The cluster's own ``prometheus_url`` first. ``settings.PROMETHEUS_URL`` only for clusters
    read live: a snapshot cluster keeps the values of its own scrape files, which a poll of a
    Prometheus holding other clusters' series would wipe (no series -> ``metrics == {}``).
    """
    if cluster.prometheus_url:
        return cluster.prometheus_url
    if cluster.source_kind != SourceKind.SNAPSHOT:
        return settings.PROMETHEUS_URL or ""
    return ""


@dataclass(frozen=True)
class MetricsState:
    """How fresh a cluster's stored DCGM values are.

    ``polled``: a Prometheus is configured for it (values should be recent). ``stale``: the last
    poll failed (``error``, from ``Cluster.metrics_error``) or, for a polled cluster, the newest
    stored sample (``since``, ``Cluster.metrics_at``) is older than ``STALE_AFTER`` or missing.
    """

    cluster: Cluster
    polled: bool
    stale: bool
    since: datetime | None
    error: str


def metrics_state(cluster: Cluster, now: datetime) -> MetricsState:
    polled = bool(prometheus_url_for(cluster))
    old = cluster.metrics_at is None or now - cluster.metrics_at > STALE_AFTER
    stale = bool(cluster.metrics_error) or (polled and old)
    return MetricsState(cluster, polled, stale, cluster.metrics_at, cluster.metrics_error)


def poll_cluster(cluster: Cluster, at: datetime | None = None) -> dict[str, int]:
    """Ask the cluster's Prometheus for the latest DCGM values and store them.

    ``at``: evaluation time (default Prometheus's now; tests pass fixture times). On
    ``MetricsUnavailable`` the message goes to ``Cluster.metrics_error``, the stored values
    stay (pages then say "metrics stale since ``metrics_at``") and the exception is re-raised
    for the caller to decide on a retry. Raises ``MetricsUnavailable`` also when no
    Prometheus is configured.
    """
    from .prometheus import MetricsUnavailable, latest_samples

    url = prometheus_url_for(cluster)
    try:
        if not url:
            raise MetricsUnavailable("no Prometheus configured for this cluster")
        samples = latest_samples(url, at=at, timeout_s=settings.PROMETHEUS_TIMEOUT)
    except MetricsUnavailable as exc:
        Cluster.objects.filter(pk=cluster.pk).update(metrics_error=str(exc)[:2000])
        raise
    return store_samples(cluster, samples, observed_at=at)


def is_transient(exc: BaseException) -> bool:
    """True for failures worth a retry: timeouts, refused connections, HTTP 429 and 5xx.

    ``MetricsUnavailable`` keeps the client's exception as ``__cause__``; Prometheus's status
    code is only in that exception's message (``HTTP Status Code 503 (...)``).
    """
    import requests
    from prometheus_api_client.exceptions import PrometheusApiClientException

    cause = exc.__cause__
    if isinstance(cause, requests.exceptions.Timeout | requests.exceptions.ConnectionError):
        return True
    if isinstance(cause, PrometheusApiClientException):
        text = str(cause)
        return text.startswith("HTTP Status Code 429") or text.startswith("HTTP Status Code 5")
    return False


def join_device(row: Device) -> dcgm_parse.Device:
    """A stored Device as the pure join wants it (no slice lookup: the join does not use it)."""
    return dcgm_parse.Device(
        driver=row.driver, pool=row.pool, name=row.name, node_name=row.node_name or None, slice_name="",
        type=row.type_raw or row.type, uuid=row.uuid or None, parent_uuid=row.parent_uuid or None,
        product_name=row.product_name or None, profile=row.profile or None, architecture=None,
        driver_version=None, pci_bus_id=None, memory_bytes=row.memory_bytes,
    )  # fmt: skip


JOIN_FIELDS = ("cluster_id", "driver", "pool", "name", "node_name", "type", "type_raw", "uuid",
               "parent_uuid", "product_name", "profile", "memory_bytes")  # fmt: skip


def gpu_neighbours(devices: list[Device]) -> list[Device]:
    """Every device sharing a physical GPU (``uuid``/``parentUUID``) with one of ``devices``,
    in their clusters: what the join needs to tell MIG instances apart. One query."""
    from django.db.models import Q

    q = Q(pk__in=[])
    for cid in {d.cluster_id for d in devices}:
        gpus = {d.uuid for d in devices if d.cluster_id == cid and d.uuid and not d.parent_uuid}
        gpus |= {d.parent_uuid for d in devices if d.cluster_id == cid and d.parent_uuid}
        if gpus:
            q |= Q(cluster_id=cid) & (Q(uuid__in=gpus) | Q(parent_uuid__in=gpus))
    return list(Device.objects.filter(q).only(*JOIN_FIELDS))


def device_history(device: Device, neighbours: list[Device], start: datetime, end: datetime, step: int):
    """Range series of ``charts.CHART_FIELDS`` for one device, narrowed by the join.

    History is read from Prometheus on demand and never stored; a cluster without a Prometheus
    reads the series its snapshot recorded (``recorded_series``) instead. The query selects
    the physical GPU's ``UUID`` (the parent for MIG instances); the join then keeps this
    device's series. Raises ``MetricsUnavailable`` (also when there is neither a Prometheus
    nor recorded history).
    """
    from . import charts
    from .prometheus import MetricsUnavailable, fields_selector, range_series

    url = prometheus_url_for(device.cluster)
    gpu = device.parent_uuid or device.uuid
    if not url:
        if not RecordedSeries.objects.filter(cluster=device.cluster).exists():
            raise MetricsUnavailable("no Prometheus configured for this cluster, and its snapshot recorded no history")
        series = recorded_series(device.cluster, [gpu], charts.CHART_FIELDS, start, end) if gpu else []
        return charts.series_for_device(series, join_device(device), [join_device(n) for n in neighbours])
    if not gpu:
        return []
    promql = fields_selector(charts.CHART_FIELDS, {"UUID": gpu})
    series = range_series(url, promql, start, end, step, timeout_s=settings.PROMETHEUS_TIMEOUT)
    return charts.series_for_device(series, join_device(device), [join_device(n) for n in neighbours])


def gpu_uuids(devices: list[Device]) -> list[str]:
    """UUIDs of the physical GPUs behind ``devices``, in their order: a whole GPU's ``uuid``,
    a MIG instance's ``parentUUID`` (DCGM labels MIG series with the parent's ``UUID``)."""
    return list(dict.fromkeys(u for d in devices if (u := d.parent_uuid or d.uuid)))


def node_history(cluster: Cluster, devices: list[Device], start: datetime, end: datetime, step: int):
    """Range series of ``charts.NODE_FIELDS`` for the physical GPUs of ``devices`` (one node's).

    ONE range query, ``{...,UUID="a"} or {...,UUID="b"} ...`` (equality matchers, values
    escaped), so the cost does not grow with queries per device; callers cap the GPUs at
    ``charts.NODE_CHART_GPUS``. Returns ``[]`` without asking when no device has a UUID. Series
    are returned as Prometheus sent them: ``charts.node_figure`` attributes them to devices.
    A cluster without a Prometheus reads its recorded series (``recorded_series``).
    Raises ``MetricsUnavailable`` (also when there is neither a Prometheus nor recorded history).
    """
    from . import charts
    from .prometheus import MetricsUnavailable, fields_selector_any, range_series

    url = prometheus_url_for(cluster)
    uuids = gpu_uuids(devices)
    if not url:
        if not RecordedSeries.objects.filter(cluster=cluster).exists():
            raise MetricsUnavailable("no Prometheus configured for this cluster, and its snapshot recorded no history")
        return recorded_series(cluster, uuids, charts.NODE_FIELDS, start, end) if uuids else []
    if not uuids:
        return []
    promql = fields_selector_any(charts.NODE_FIELDS, "UUID", uuids)
    return range_series(url, promql, start, end, step, timeout_s=settings.PROMETHEUS_TIMEOUT)


def average_utilization(
    cluster: Cluster, devices: list[Device], neighbours: list[Device], window_s: int, end: datetime | None
) -> dict[int, float]:
    """Device pk -> mean utilization (percent) over ``window_s`` seconds before ``end``.

    Two instant queries: ``avg_over_time`` of ``DCGM_FI_DEV_GPU_UTIL`` and of
    ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (x 100, for MIG instances), joined to ``devices`` like a
    poll. Devices without series in the window are absent. Raises ``MetricsUnavailable``.
    """
    from . import charts
    from .dcgm import from_query_result, join_samples
    from .prometheus import MetricsUnavailable, fields_selector, query_vector

    url = prometheus_url_for(cluster)
    rows = [*devices, *(n for n in neighbours if n.cluster_id == cluster.pk)]
    join_rows = {(d.driver, d.pool, d.name): d for d in rows}
    wanted = {(d.driver, d.pool, d.name): d.pk for d in devices}
    out: dict[int, float] = {}
    for field, scale in ((charts.GPU_UTIL, 1.0), (charts.GR_ACTIVE, 100.0)):
        promql = f"avg_over_time({fields_selector([field])}[{int(window_s)}s])"
        result = query_vector(url, promql, end, settings.PROMETHEUS_TIMEOUT)
        # avg_over_time drops the metric name; put it back so the exporter labels parse.
        for entry in result:
            entry.setdefault("metric", {})["__name__"] = field
        try:
            samples = from_query_result(result)
        except ValueError as exc:
            raise MetricsUnavailable(f"Prometheus at {url} sent malformed samples: {exc}") from exc
        joined = join_samples(samples, [join_device(d) for d in join_rows.values()])
        for key, t in joined.by_device.items():
            if key in wanted and field in t.values:
                out.setdefault(wanted[key], t.values[field] * scale)
    return out
