"""DCGM exporter series: parse them and join them to ResourceSlice devices.

Pure: no Django, no clock, no network. Inputs are the exporter's Prometheus text exposition
(``/metrics`` of ``dcgm-exporter``, or a ``.prom`` file of a snapshot) or the ``result`` list of a
Prometheus HTTP API instant query (``/api/v1/query``, ``resultType: vector``). Output is
``DcgmSample`` records and, after ``join_samples``, the latest value of each DCGM field per device
keyed like an allocation result names it: ``(driver, pool, device)``.

Facts and where they come from (dcgm-exporter labels):

- ``UUID``: the physical GPU's UUID (``GPU-...``). For MIG series it is the *parent* GPU's UUID;
  the instance is told apart by ``GPU_I_ID`` (GPU instance id) and ``GPU_I_PROFILE``
  (``1g.10gb``...). Relabelled scrapes that lower-case it to ``uuid`` are accepted too.
- ``gpu``: the GPU's minor number / index on the node. ``Hostname``: the node (the label was
  renamed to ``hostname`` in 2026, dcgm-exporter PR #655); both are accepted.
- ``pod``, ``namespace``, ``container``: the workload the exporter attributed the GPU to (only
  when pod labels are enabled; empty strings mean "none"). Older relabelled scrapes use
  ``pod_name``, ``pod_namespace``, ``container_name``; series scraped with ``honor_labels: false``
  carry them as ``exported_pod`` etc. A Prometheus series whose ``pod`` is the exporter's own
  pod (``container`` equal to the scrape ``job``/``service``) is *not* a workload attribution.
- ``dra_claim_name``, ``dra_claim_namespace``, ``dra_pool_name``, ``dra_device_name``,
  ``dra_mig_profile``, ``dra_mig_device_uuid``: set by the exporter in DRA mode
  (``KUBERNETES_ENABLE_DRA``); they name the ResourceClaim and the slice device directly.

Metric names are DCGM field names (``DCGM_FI_DEV_GPU_UTIL``); a relabelled, lower-cased
``dcgm_fi_...`` name is normalised to upper case. Non-DCGM series are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from inventory.kube import is_unix_time
from inventory.parse import Device

# Field name -> (human label, unit). Units as dcgm-exporter's counter CSVs state them
# (etc/default-counters.csv): percent, MiB, degrees Celsius, watts, MHz.
METRICS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "DCGM_FI_DEV_GPU_UTIL": ("GPU utilization", "%"),
        "DCGM_FI_DEV_MEM_COPY_UTIL": ("Memory copy utilization", "%"),
        "DCGM_FI_DEV_FB_USED": ("Framebuffer memory used", "MiB"),
        "DCGM_FI_DEV_FB_FREE": ("Framebuffer memory free", "MiB"),
        "DCGM_FI_DEV_GPU_TEMP": ("GPU temperature", "°C"),
        "DCGM_FI_DEV_POWER_USAGE": ("Power draw", "W"),
        "DCGM_FI_DEV_SM_CLOCK": ("SM clock", "MHz"),
        # A code, not a count: the value of the last XID error seen (0 = none).
        "DCGM_FI_DEV_XID_ERRORS": ("Last XID error", "XID"),
        # Ratio 0..1 of time the graphics engine was busy. The only utilization DCGM produces
        # per MIG instance (DCGM_FI_DEV_GPU_UTIL is not produced for GPU_I_ID series).
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("Graphics engine active", "ratio"),
    }
)

#: The fields a telemetry poll asks Prometheus for.
DEFAULT_FIELDS: tuple[str, ...] = tuple(METRICS)

_PREFIX = "DCGM_"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
GR_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


def metric_label(field_name: str) -> str:
    """Human label of a DCGM field, the field name itself when not in ``METRICS``."""
    return METRICS.get(field_name, (field_name, ""))[0]


def metric_unit(field_name: str) -> str:
    """Unit of a DCGM field (``%``, ``MiB``, ``°C``, ``W``, ``MHz``, ``ratio``, ``XID``) or ``""``."""
    return METRICS.get(field_name, ("", ""))[1]


@dataclass(frozen=True)
class DcgmSample:
    """One DCGM series value.

    ``field``: DCGM field name (upper case). ``value``: float in the field's unit (see
    ``METRICS``). ``uuid``: ``UUID`` label (parent GPU for MIG series). ``gpu_index``: ``gpu``
    label. ``hostname``: ``Hostname``/``hostname``. ``gpu_instance_id``/``mig_profile``:
    ``GPU_I_ID``/``GPU_I_PROFILE`` (None for whole GPUs). ``pod``/``namespace``/``container``:
    the exporter's workload attribution (None when empty). ``labels``: all labels as read,
    except ``__name__``. ``timestamp``: Unix seconds, None when the exposition had none.
    """

    field: str
    value: float
    uuid: str | None
    gpu_index: str | None
    hostname: str | None
    gpu_instance_id: str | None
    mig_profile: str | None
    pod: str | None
    namespace: str | None
    container: str | None
    labels: Mapping[str, str]
    timestamp: float | None

    @property
    def is_mig(self) -> bool:
        """True for a per-MIG-instance series (it carries ``GPU_I_ID``)."""
        return self.gpu_instance_id is not None

    def label(self, name: str) -> str | None:
        """A label's value, None when absent or empty."""
        v = self.labels.get(name)
        return v if v else None


def _first(labels: Mapping[str, str], *names: str) -> str | None:
    for n in names:
        v = labels.get(n)
        if v:
            return v
    return None


def _is_scrape_target_pod(labels: Mapping[str, str]) -> bool:
    # With honor_labels the exporter's pod labels win; when it attributes nothing, the
    # Kubernetes service discovery labels of the exporter pod itself remain (real aicr query
    # result: pod=nvidia-dcgm-exporter-wqqqn, container=nvidia-dcgm-exporter, job=service=
    # nvidia-dcgm-exporter). Those name the exporter, not a workload.
    container = labels.get("container")
    if not container:
        return False
    return container in {labels.get("job"), labels.get("service")}


def sample_from_labels(
    name: str, labels: Mapping[str, str], value: float, timestamp: float | None
) -> DcgmSample | None:
    """Build a ``DcgmSample`` from a metric name and its labels; None for non-DCGM names."""
    field_name = name.upper()
    if not field_name.startswith(_PREFIX):
        return None
    labels = {k: v for k, v in labels.items() if k != "__name__"}
    if _first(labels, "exported_pod"):
        pod = _first(labels, "exported_pod")
        namespace = _first(labels, "exported_namespace")
        container = _first(labels, "exported_container")
    elif _is_scrape_target_pod(labels):
        pod = namespace = container = None
    else:
        pod = _first(labels, "pod", "pod_name")
        namespace = _first(labels, "namespace", "pod_namespace")
        container = _first(labels, "container", "container_name")
    if pod is None:
        namespace = container = None
    return DcgmSample(
        field=field_name,
        value=float(value),
        uuid=_first(labels, "UUID", "uuid"),
        gpu_index=_first(labels, "gpu"),
        hostname=_first(labels, "hostname", "Hostname"),
        gpu_instance_id=_first(labels, "GPU_I_ID"),
        mig_profile=_first(labels, "GPU_I_PROFILE"),
        pod=pod,
        namespace=namespace,
        container=container,
        labels=MappingProxyType(labels),
        timestamp=timestamp,
    )


@dataclass(frozen=True)
class Scrape:
    """A parsed scrape: ``samples`` (the ``DCGM_*`` ones), ``skipped`` malformed sample lines,
    ``problems``: the first few of them as ``line N: malformed sample '...': reason``."""

    samples: list[DcgmSample]
    skipped: int = 0
    problems: tuple[str, ...] = ()


_PROBLEMS_KEPT = 5


def parse_scrape(text: str, *, timestamp: float | None = None) -> Scrape:
    """Parse Prometheus text exposition (or OpenMetrics) and keep the ``DCGM_*`` samples,
    skipping and counting malformed sample lines (a truncated scrape, a hand-edited file):
    one bad line costs that line, never the file or the sync.

    Works with or without ``# HELP``/``# TYPE`` lines (sample-only pastes are common).
    ``timestamp`` (Unix seconds) is used for samples whose line carries none, e.g. the
    snapshot time of a ``.prom`` file; a line's own timestamp (milliseconds in the text
    format) wins. Comment lines are not validated.
    """
    out: list[DcgmSample] = []
    skipped = 0
    problems: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            parsed = []
            for fam in text_string_to_metric_families(stripped + "\n"):
                for s in fam.samples:
                    ts = s.timestamp
                    ts_f = float(ts) if ts is not None else timestamp
                    if ts_f is not None and not is_unix_time(ts_f):
                        raise ValueError(f"timestamp {ts_f!r} is not a time (years 1-9999)")
                    sample = sample_from_labels(s.name, s.labels, s.value, ts_f)
                    if sample is not None:
                        parsed.append(sample)
        except Exception as exc:  # the parser raises ValueError, IndexError, KeyError...
            skipped += 1
            if len(problems) < _PROBLEMS_KEPT:
                problems.append(f"line {lineno}: malformed sample {stripped[:120]!r}: {str(exc)[:200]}")
            continue
        out.extend(parsed)
    return Scrape(out, skipped, tuple(problems))


def parse_exposition(text: str, *, timestamp: float | None = None) -> list[DcgmSample]:
    """``parse_scrape``'s samples, strictly: a malformed sample line raises ``ValueError``
    naming its 1-based line number (for text pasted or fetched whole, where a bad line means
    the wrong input; snapshot scrapes go through ``parse_scrape``, which skips and counts)."""
    scrape = parse_scrape(text, timestamp=timestamp)
    if scrape.skipped:
        raise ValueError(scrape.problems[0])
    return scrape.samples


def from_query_result(result: Iterable[Mapping[str, Any]]) -> list[DcgmSample]:
    """DCGM samples from a Prometheus HTTP API vector result (``data.result`` of /api/v1/query).

    Each entry is ``{"metric": {"__name__": ..., labels...}, "value": [unix_s, "string"]}``.
    Entries without ``__name__`` or with a non-numeric value raise ``ValueError``;
    non-DCGM names are skipped.
    """
    out: list[DcgmSample] = []
    for i, entry in enumerate(result):
        metric = entry.get("metric") or {}
        name = metric.get("__name__")
        value = entry.get("value")
        if not isinstance(name, str) or not isinstance(value, list | tuple) or len(value) != 2:
            raise ValueError(f"result[{i}] is not a vector sample with __name__: {entry!r:.200}")
        try:
            ts, v = float(value[0]), float(value[1])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"result[{i}] has a non-numeric value {value!r}") from exc
        if not is_unix_time(ts):
            raise ValueError(f"result[{i}] has a timestamp that is not a time: {value!r:.100}")
        sample = sample_from_labels(name, {str(k): str(x) for k, x in metric.items()}, v, ts)
        if sample is not None:
            out.append(sample)
    return out


@dataclass(frozen=True)
class DeviceTelemetry:
    """Latest DCGM values of one slice device.

    ``values``: DCGM field name -> latest value (unit per ``METRICS``; NaN values dropped).
    ``at``: ISO 8601 UTC time of the newest sample, None when samples had no timestamps.
    ``pod``: ``"namespace/name"`` from the exporter's pod labels of the newest sample, or None.
    ``container``: its container label. ``claim``: ``"namespace/name"`` from
    ``dra_claim_namespace``/``dra_claim_name``, or None. ``hostname``: exporter node label.
    ``matched_by``: how the series were tied to the device (``uuid``, ``dra_device``,
    ``dra_mig_device_uuid``, ``parent_uuid_profile``).
    """

    values: dict[str, float]
    at: str | None
    pod: str | None
    claim: str | None
    container: str | None = None
    hostname: str | None = None
    matched_by: str = "uuid"


@dataclass(frozen=True)
class TelemetryJoin:
    """Result of ``join_samples``.

    ``by_device``: ``Device.key`` -> ``DeviceTelemetry``. ``unmatched``: each sample that fits
    no device, with the reason (kept, not dropped: it may be a GPU missing from the slices).
    ``devices_without_series``: keys of devices with a ``uuid`` attribute (GPUs, MIG
    instances) that no sample matched.
    """

    by_device: dict[tuple[str, str, str], DeviceTelemetry]
    unmatched: list[tuple[DcgmSample, str]]
    devices_without_series: list[tuple[str, str, str]] = field(default_factory=list)


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )


class _Index:
    def __init__(self, devices: Iterable[Device]) -> None:
        self.devices: list[Device] = list(devices)
        self.by_uuid: dict[str, list[Device]] = {}
        self.by_parent_profile: dict[tuple[str, str], list[Device]] = {}
        self.by_pool_name: dict[tuple[str, str], list[Device]] = {}
        for d in self.devices:
            if d.uuid:
                self.by_uuid.setdefault(d.uuid, []).append(d)
            if d.parent_uuid and d.profile:
                self.by_parent_profile.setdefault((d.parent_uuid, d.profile), []).append(d)
            self.by_pool_name.setdefault((d.pool, d.name), []).append(d)


def _narrow_by_host(cands: list[Device], hostname: str | None) -> list[Device]:
    if len(cands) > 1 and hostname:
        same = [d for d in cands if d.node_name == hostname]
        if same:
            return same
    return cands


def _match(s: DcgmSample, idx: _Index) -> tuple[Device | None, str]:
    """(device, how) or (None, reason)."""
    # 1. The exporter's DRA labels name the device outright.
    mig_uuid = s.label("dra_mig_device_uuid")
    if mig_uuid:
        cands = [d for d in idx.by_uuid.get(mig_uuid, []) if d.type == "mig" or d.parent_uuid]
        if len(cands) == 1:
            return cands[0], "dra_mig_device_uuid"
    pool, dev = s.label("dra_pool_name"), s.label("dra_device_name")
    if pool and dev:
        cands = idx.by_pool_name.get((pool, dev), [])
        if len(cands) == 1:
            return cands[0], "dra_device"
    if not s.uuid:
        return None, "series has no UUID label"
    if s.is_mig:
        if not s.mig_profile:
            return None, f"MIG series (GPU_I_ID={s.gpu_instance_id}) without GPU_I_PROFILE"
        cands = _narrow_by_host(idx.by_parent_profile.get((s.uuid, s.mig_profile), []), s.hostname)
        if len(cands) == 1:
            return cands[0], "parent_uuid_profile"
        if not cands:
            return None, (
                f"no MIG device with parentUUID {s.uuid} and profile {s.mig_profile} "
                f"(GPU_I_ID={s.gpu_instance_id})"
            )
        # The slice does not publish the GPU instance id, so GPU_I_ID cannot pick one.
        names = ", ".join(sorted(d.name for d in cands))
        return None, (
            f"ambiguous MIG series: {len(cands)} {s.mig_profile} instances on parent {s.uuid} "
            f"({names}) and no dra_* label to tell GPU_I_ID={s.gpu_instance_id} apart"
        )
    cands = [d for d in idx.by_uuid.get(s.uuid, []) if not d.parent_uuid]
    cands = _narrow_by_host(cands, s.hostname)
    if len(cands) == 1:
        return cands[0], "uuid"
    if not cands:
        if any(d.parent_uuid == s.uuid for d in idx.devices):
            return None, (
                f"whole-GPU series for {s.uuid}, but that GPU is published only as MIG devices"
            )
        return None, f"no device with uuid {s.uuid}"
    return None, f"{len(cands)} devices share uuid {s.uuid}"


def _ts_key(s: DcgmSample) -> float:
    return s.timestamp if s.timestamp is not None else -math.inf


def join_samples(samples: Iterable[DcgmSample], devices: Iterable[Device]) -> TelemetryJoin:
    """Tie DCGM samples to slice devices and keep the latest value per device and field.

    Matching, strongest first: the exporter's ``dra_mig_device_uuid`` label (MIG device
    ``uuid`` attribute); ``dra_pool_name`` + ``dra_device_name`` (slice pool and device name);
    for MIG series (``GPU_I_ID`` set) the parent ``UUID`` + ``GPU_I_PROFILE`` against the MIG
    device's ``parentUUID`` + ``profile`` attributes when exactly one such instance exists;
    otherwise ``UUID`` against a whole device's ``uuid`` attribute. A MIG series with several
    instances of its profile on the parent and no ``dra_*`` label stays unmatched (the slice
    does not publish GPU instance ids). ``Hostname`` only breaks ties between devices sharing
    a UUID. "Latest" is the greatest timestamp; samples without one count as oldest, and
    among equals the later one in input order wins.
    """
    idx = _Index(devices)
    grouped: dict[tuple[str, str, str], list[tuple[DcgmSample, str]]] = {}
    unmatched: list[tuple[DcgmSample, str]] = []
    for s in samples:
        dev, how = _match(s, idx)
        if dev is None:
            unmatched.append((s, how))
        else:
            grouped.setdefault(dev.key, []).append((s, how))

    by_device: dict[tuple[str, str, str], DeviceTelemetry] = {}
    for key, items in grouped.items():
        latest: dict[str, DcgmSample] = {}
        for s, _ in items:
            cur = latest.get(s.field)
            if cur is None or _ts_key(s) >= _ts_key(cur):
                latest[s.field] = s
        values = {f: s.value for f, s in latest.items() if not math.isnan(s.value)}
        newest = max((s for s, _ in items), key=_ts_key)
        newest_ts = newest.timestamp
        # Attribution from the newest samples; among those, any that carries it.
        at_newest = [s for s, _ in items if s.timestamp == newest_ts]
        with_pod = next((s for s in reversed(at_newest) if s.pod), None)
        with_claim = next(
            (s for s in reversed(at_newest) if s.label("dra_claim_name")), None
        )
        pod = f"{with_pod.namespace or ''}/{with_pod.pod}" if with_pod else None
        claim = (
            f"{with_claim.label('dra_claim_namespace') or ''}/{with_claim.label('dra_claim_name')}"
            if with_claim
            else None
        )
        hows = {h for _, h in items}
        by_device[key] = DeviceTelemetry(
            values=values,
            at=_iso(newest_ts),
            pod=pod,
            claim=claim,
            container=with_pod.container if with_pod else None,
            hostname=newest.hostname,
            matched_by=min(hows) if len(hows) == 1 else ",".join(sorted(hows)),
        )
    unseen = [d.key for d in idx.devices if d.uuid and d.key not in by_device]
    return TelemetryJoin(by_device=by_device, unmatched=unmatched, devices_without_series=unseen)


def utilization_percent(metrics: Mapping[str, float]) -> float | None:
    """Utilization in percent from stored latest values: ``DCGM_FI_DEV_GPU_UTIL`` (whole GPU)
    or ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` x 100 (MIG instance); None when neither is known."""
    v = metrics.get(GPU_UTIL)
    if isinstance(v, int | float) and not math.isnan(v):
        return float(v)
    g = metrics.get(GR_ACTIVE)
    if isinstance(g, int | float) and not math.isnan(g):
        return float(g) * 100.0
    return None
