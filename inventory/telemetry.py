"""Store the latest DCGM values on devices: from snapshot scrapes or a Prometheus poll.

The pure parsing and join live in ``inventory.dcgm``; this module adapts rows to it and
writes ``Device.metrics`` (DCGM field name -> value in the field's unit), ``metrics_at`` and
``metrics_pod`` (``ns/name`` from the exporter's pod labels), plus unmatched series.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone

from .models import Cluster, Device, UnmatchedSeries
from .sync import BULK, _device_from_row


def store_samples(cluster: Cluster, samples, observed_at: datetime | None = None) -> dict[str, int]:
    """Join ``samples`` (``dcgm.DcgmSample``) to the cluster's devices and store latest values.

    Devices without a series keep no stale values: their ``metrics`` become ``{}``.
    Returns ``{"matched_devices": n, "unmatched_series": m}``.
    """
    from . import dcgm

    rows = list(Device.objects.filter(cluster=cluster).select_related("slice"))
    by_key = {(d.driver, d.pool, d.name): d for d in rows}
    joined = dcgm.join_samples(samples, [_device_from_row(d) for d in rows])
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
        Device.objects.bulk_update(changed, ["metrics", "metrics_at", "metrics_pod"], batch_size=BULK)
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


def store_scrapes(cluster: Cluster, prom: dict[str, str]) -> dict[str, int]:
    """Parse every scrape of a snapshot folder and store the values (file mtime unknown: the
    samples' own timestamps, else the sync time, are recorded)."""
    from . import dcgm

    samples = []
    for text in prom.values():
        samples.extend(dcgm.parse_exposition(text))
    return store_samples(cluster, samples, observed_at=datetime.now(UTC))
