"""Chargeback: GPU-hours per namespace, team and GPU product over a time window, allocated
and used, priced.

Pure: no Django, no clock (the window is passed in). Inputs are parse-layer records
(``inventory.records.ResourceClaim``), device facts (``GpuDevice``, built by the caller from
stored ``Device`` rows or a snapshot's ResourceSlices) and stored holdings (``Holding``: one
device one claim held from ``start`` until ``end``). The counting rule (docs/chargeback.md):

- a whole GPU (driver ``type`` attribute ``gpu``) counts 1;
- a MIG instance counts its share of the parent GPU: its profile's memory slices over the
  GPU model's memory slices (``inventory/data/mig_profiles.yaml``, keyed by ``productName``),
  else its ``memory`` capacity over the parent's (``parentUUID``), else 1;
- a device shared between claims (``consumedCapacity`` in the allocation result) counts the
  largest consumed share of any capacity it publishes (``cores: 100`` of ``cores: 100`` is 1);
- a device of another type counts only when it names a GPU product (``productName``), as 1;
  others (NICs, IMEX channels) are not GPUs and count 0;
- a pending claim (no ``status.allocation``) holds nothing and counts 0;
- hours are clipped to the window: ``max(0, min(end, until) - max(start, since))``.

Units: hours are hours (3600 s); ``gpu_hours`` = hours x share ("whole-GPU equivalents");
utilization is percent (DCGM ``DCGM_FI_DEV_GPU_UTIL``, or ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``
x 100 for a MIG instance); prices are per whole-GPU-hour in ``currency``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from itertools import pairwise
from typing import Any

from inventory import mig
from inventory.records.resource import parse_quantity

MEASURED = "measured"
ESTIMATE = "estimate"
#: Price key used for a product the price table does not name.
DEFAULT_PRICE_KEY = "*"
UNKNOWN_PRODUCT = "unknown product"


@dataclass(frozen=True)
class GpuDevice:
    """What chargeback needs of one published device (a stored ``Device`` row).

    ``key``: (driver, pool, device) as allocation results name it. ``type``: ``gpu``, ``mig``
    or ``other`` (``Device.type``). ``capacity``: capacity name (possibly qualified with the
    driver's domain) -> quantity text. ``memory_bytes``: capacity ``memory`` in bytes.
    """

    key: tuple[str, str, str]
    type: str
    product: str = ""
    profile: str = ""
    uuid: str = ""
    parent_uuid: str = ""
    memory_bytes: int | None = None
    capacity: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Holding:
    """One device one claim held from ``start`` until ``end`` (None: still held).

    ``share``: whole-GPU equivalents (the counting rule above). ``utilization``: percent over
    the window, ``basis`` ``measured`` (Prometheus average) or ``estimate`` (latest stored
    value), both None/"" when no DCGM value is known.
    """

    cluster: str
    namespace: str
    claim: str
    claim_uid: str
    device: tuple[str, str, str]
    product: str
    kind: str
    share: float
    start: datetime | None
    end: datetime | None
    utilization: float | None = None
    basis: str = ""


def _short(name: str) -> str:
    return name.rpartition("/")[2]


def _ratio(consumed: str, capacity: str | None) -> float | None:
    c, total = parse_quantity(consumed), parse_quantity(capacity)
    if c is None or total is None or total <= 0 or c < 0:
        return None
    return float(c / total)


def shared_share(consumed: Sequence[tuple[str, str]], capacity: Mapping[str, str]) -> float | None:
    """Share of a shared device one allocation holds: the largest ``consumedCapacity`` /
    published ``capacity`` over the capacities both name (names compared without the
    driver's domain), capped at 1; None when no consumed capacity is comparable."""
    published = {_short(k): v for k, v in capacity.items()}
    ratios = [r for name, q in consumed if (r := _ratio(q, published.get(_short(name)))) is not None]
    return min(1.0, max(ratios)) if ratios else None


@lru_cache(maxsize=256)
def _profile_share(product: str, profile: str) -> float | None:
    """Memory slices of ``profile`` over the GPU model's, from the profile tables; None when
    the model or profile is not in them."""
    model = mig.model_for(product)
    prof = model.profile(profile) if model and profile else None
    return prof.size / model.slices if model and prof else None


def mig_share(device: GpuDevice, parent_memory: int | None = None) -> float:
    """Share of its parent GPU a MIG instance is: profile memory slices / the model's memory
    slices; else ``memory`` / parent ``memory``; else 1 (over- rather than under-charging)."""
    share = _profile_share(device.product, device.profile)
    if share is not None:
        return share
    if device.memory_bytes and parent_memory and parent_memory > 0:
        return min(1.0, device.memory_bytes / parent_memory)
    return 1.0


def device_share(device: GpuDevice, consumed: Sequence[tuple[str, str]] = (), parent_memory: int | None = None) -> tuple[str, float]:
    """(kind, whole-GPU equivalents) of one allocated device: kind ``gpu``, ``mig``,
    ``shared`` or ``not_gpu`` (share 0). See the module docstring for the rule."""
    if consumed:
        share = shared_share(consumed, device.capacity)
        if share is not None:
            base = mig_share(device, parent_memory) if device.type == "mig" else 1.0
            return "shared", share * base
    if device.type == "gpu":
        return "gpu", 1.0
    if device.type == "mig":
        return "mig", mig_share(device, parent_memory)
    if device.product:
        return "gpu", 1.0
    return "not_gpu", 0.0


def result_holding(
    cluster: str,
    namespace: str,
    claim: str,
    claim_uid: str,
    device: GpuDevice,
    consumed: Sequence[tuple[str, str]] = (),
    parent_memory: int | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> Holding | None:
    """The holding of one allocation result naming ``device`` (``consumed``: its
    ``consumedCapacity``); None when the device is not a GPU (share 0)."""
    kind, share = device_share(device, consumed, parent_memory)
    if kind == "not_gpu":
        return None
    return Holding(
        cluster=cluster, namespace=namespace, claim=claim, claim_uid=claim_uid, device=device.key,
        product=device.product or UNKNOWN_PRODUCT, kind=kind, share=share, start=start, end=end,
    )  # fmt: skip


def claim_holdings(
    cluster: str,
    claim: Any,
    devices: Mapping[tuple[str, str, str], GpuDevice],
    start: datetime | None,
    end: datetime | None = None,
) -> tuple[list[Holding], int]:
    """The holdings of one claim record (``inventory.records.ResourceClaim``): one per
    allocation result naming a known GPU device, from ``start`` (the caller's choice:
    ``allocationTimestamp``, else history) until ``end``.

    Returns (holdings, results not counted: device not published or not a GPU). A claim
    without ``status.allocation`` holds nothing: ([], 0).
    """
    if not claim.allocated:
        return [], 0
    by_uuid = {d.uuid: d for d in devices.values() if d.uuid}
    out: list[Holding] = []
    skipped = 0
    for r in claim.results:
        dev = devices.get(r.device_key)
        parent = by_uuid.get(dev.parent_uuid) if dev is not None and dev.parent_uuid else None
        h = None if dev is None else result_holding(
            cluster, claim.namespace, claim.name, claim.uid, dev, getattr(r, "consumed_capacity", ()),
            parent.memory_bytes if parent else None, start, end,
        )  # fmt: skip
        if h is None:
            skipped += 1
        else:
            out.append(h)
    return out, skipped


def needs_parent_memory(device: GpuDevice) -> bool:
    """Whether ``mig_share`` would fall back to the parent GPU's memory (no profile table)."""
    return device.type == "mig" and _profile_share(device.product, device.profile) is None


def held_seconds(start: datetime | None, end: datetime | None, since: datetime, until: datetime) -> float:
    """Seconds of [since, until) a device was held from ``start`` (None: before the window)
    until ``end`` (None: still held at ``until``); 0 when the two do not overlap."""
    lo = max(start, since) if start else since
    hi = min(end, until) if end else until
    return max(0.0, (hi - lo).total_seconds())


def team_of(namespace: str, labels: Mapping[str, Mapping[str, str]], key: str,
            teams: Mapping[str, str] | None = None) -> str:
    """The team of a namespace: its label or annotation ``key`` (``labels``: namespace ->
    labels and annotations merged), else its entry in ``teams`` (namespace -> team, from
    settings), else ""."""
    if key:
        found = labels.get(namespace, {}).get(key)
        if found:
            return str(found)
    return str((teams or {}).get(namespace, ""))


def price_of(product: str, prices: Mapping[str, Any]) -> Decimal | None:
    """Price per whole-GPU-hour of ``product``: its entry, else the ``*`` entry, else None."""
    v = prices.get(product, prices.get(DEFAULT_PRICE_KEY))
    if v is None:
        return None
    try:
        return Decimal(str(v))
    except ArithmeticError:
        return None


@dataclass
class Row:
    """Totals of one (cluster, namespace, team, product) over the window.

    ``gpu_hours``: allocated whole-GPU-hours. ``used_measured``/``used_estimated``:
    ``gpu_hours x utilization/100`` of the holdings with a measured / estimated utilization;
    ``hours_measured``/``hours_estimated``: the allocated GPU-hours those cover;
    ``hours_unknown``: allocated GPU-hours without any DCGM value. ``cost``: gpu_hours x price.
    """

    cluster: str
    namespace: str
    team: str
    product: str
    gpu_hours: float = 0.0
    used_measured: float = 0.0
    used_estimated: float = 0.0
    hours_measured: float = 0.0
    hours_estimated: float = 0.0
    hours_unknown: float = 0.0
    claims: set[str] = field(default_factory=set)
    devices: int = 0
    price: Decimal | None = None

    @property
    def used_gpu_hours(self) -> float:
        return self.used_measured + self.used_estimated

    @property
    def idle_share(self) -> float | None:
        """Share (0..1) of the GPU-hours with a known utilization that were idle; None when
        no holding had one."""
        known = self.hours_measured + self.hours_estimated
        return None if known <= 0 else max(0.0, 1.0 - self.used_gpu_hours / known)

    @property
    def cost(self) -> float | None:
        return None if self.price is None else float(Decimal(str(round(self.gpu_hours, 6))) * self.price)

    def as_dict(self) -> dict[str, Any]:
        idle = self.idle_share
        return {
            "cluster": self.cluster, "namespace": self.namespace, "team": self.team, "product": self.product,
            "gpu_hours": round(self.gpu_hours, 4), "used_gpu_hours": round(self.used_gpu_hours, 4),
            "used_gpu_hours_measured": round(self.used_measured, 4), "used_gpu_hours_estimated": round(self.used_estimated, 4),
            "gpu_hours_measured": round(self.hours_measured, 4), "gpu_hours_estimated": round(self.hours_estimated, 4),
            "gpu_hours_no_utilization": round(self.hours_unknown, 4),
            "idle_share": None if idle is None else round(idle, 4),
            "price_per_gpu_hour": None if self.price is None else float(self.price),
            "cost": None if self.cost is None else round(self.cost, 2),
            "claims": len(self.claims), "devices": self.devices,
        }  # fmt: skip


@dataclass
class Report:
    """Chargeback over [since, until): ``rows`` per (cluster, namespace, team, product),
    ``namespaces`` summed over products, ``trend``: (bucket start, namespace, GPU-hours)."""

    since: datetime
    until: datetime
    currency: str
    rows: list[Row]
    trend: list[tuple[datetime, str, float]]
    bucket: timedelta
    not_counted: int = 0

    def namespaces(self) -> list[dict[str, Any]]:
        """One entry per (cluster, namespace): ``namespace``, ``team``, ``gpu_hours``, used
        measured/estimated, ``idle_share``, ``cost`` and ``products`` (the rows' dicts)."""
        groups: dict[tuple[str, str], list[Row]] = {}
        for r in self.rows:
            groups.setdefault((r.cluster, r.namespace), []).append(r)
        out = []
        for (cluster, ns), rows in groups.items():
            known = sum(r.hours_measured + r.hours_estimated for r in rows)
            used = sum(r.used_gpu_hours for r in rows)
            costs = [r.cost for r in rows if r.cost is not None]
            out.append({
                "cluster": cluster, "namespace": ns, "team": rows[0].team,
                "gpu_hours": round(sum(r.gpu_hours for r in rows), 4),
                "used_gpu_hours_measured": round(sum(r.used_measured for r in rows), 4),
                "used_gpu_hours_estimated": round(sum(r.used_estimated for r in rows), 4),
                "gpu_hours_no_utilization": round(sum(r.hours_unknown for r in rows), 4),
                "idle_share": None if known <= 0 else round(max(0.0, 1 - used / known), 4),
                "cost": round(sum(costs), 2) if costs else None,
                "unpriced_gpu_hours": round(sum(r.gpu_hours for r in rows if r.cost is None), 4),
                "products": [r.as_dict() for r in rows],
            })  # fmt: skip
        out.sort(key=lambda n: (-n["gpu_hours"], n["cluster"], n["namespace"]))
        return out

    def teams(self) -> list[dict[str, Any]]:
        """GPU-hours and cost per team ("" = no team label)."""
        groups: dict[str, list[Row]] = {}
        for r in self.rows:
            groups.setdefault(r.team, []).append(r)
        out = []
        for team, rows in groups.items():
            costs = [r.cost for r in rows if r.cost is not None]
            out.append({
                "team": team, "gpu_hours": round(sum(r.gpu_hours for r in rows), 4),
                "used_gpu_hours": round(sum(r.used_gpu_hours for r in rows), 4),
                "cost": round(sum(costs), 2) if costs else None,
                "namespaces": sorted({r.namespace for r in rows}),
            })  # fmt: skip
        out.sort(key=lambda t: (-t["gpu_hours"], t["team"]))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(), "until": self.until.isoformat(), "currency": self.currency,
            "gpu_hours": round(sum(r.gpu_hours for r in self.rows), 4),
            "namespaces": self.namespaces(), "teams": self.teams(),
            "not_counted_results": self.not_counted,
            "trend": {"bucket_seconds": int(self.bucket.total_seconds()),
                      "points": [{"start": t.isoformat(), "namespace": ns, "gpu_hours": round(v, 4)} for t, ns, v in self.trend]},
        }  # fmt: skip


#: CSV columns of ``csv_rows`` (one line per namespace and product).
CSV_COLUMNS = (
    "cluster", "namespace", "team", "product", "gpu_hours", "used_gpu_hours_measured", "used_gpu_hours_estimated",
    "gpu_hours_no_utilization", "idle_share", "price_per_gpu_hour", "cost", "currency", "claims", "devices",
)  # fmt: skip


def csv_rows(report: Report) -> list[list[Any]]:
    """``CSV_COLUMNS`` values per (namespace, product) row, in the namespaces' order."""
    return [[report.currency if c == "currency" else p[c] for c in CSV_COLUMNS] for n in report.namespaces() for p in n["products"]]


Part = tuple[datetime | None, datetime | None, float]  # (start, end, share) of a holding


def capped_per_device(holdings: list[Holding], since: datetime, until: datetime) -> list[tuple[Holding, list[Part]]]:
    """Each holding with the stretches it is billed for, (start, end, share): itself, unless
    the shares of the holdings of its device held at the same time add up to more than 1 (two
    sharers' largest ratios of different capacities; an exclusive device allocated twice).
    Then, for each such stretch within [since, until), each share is scaled down in
    proportion: a device is billed at most one GPU-hour per hour, in every trend bucket too."""
    out: list[tuple[Holding, list[Part]]] = [(h, [(h.start, h.end, h.share)]) for h in holdings]
    groups: dict[tuple[str, tuple[str, str, str]], list[int]] = {}
    for i, h in enumerate(holdings):
        groups.setdefault((h.cluster, h.device), []).append(i)
    for idxs in groups.values():
        if len(idxs) < 2 or sum(max(0.0, holdings[i].share) for i in idxs) <= 1:
            continue  # even all at once they stay within one GPU
        spans = {i: (max(holdings[i].start or since, since), min(holdings[i].end or until, until)) for i in idxs}
        points = sorted({t for lo, hi in spans.values() if lo < hi for t in (lo, hi)})
        parts: dict[int, list[Part]] = {i: [] for i in idxs}
        for a, b in pairwise(points):
            active = [i for i in idxs if spans[i][0] <= a and spans[i][1] >= b and holdings[i].share > 0]
            total = sum(holdings[i].share for i in active)
            for i in active:
                share = holdings[i].share / max(1.0, total)
                run = parts[i]
                if run and run[-1][1] == a and run[-1][2] == share:
                    run[-1] = (run[-1][0], b, share)  # one stretch while nothing changes
                else:
                    run.append((a, b, share))
        for i in idxs:
            out[i] = (holdings[i], parts[i])
    return out


def bucket_for(since: datetime, until: datetime) -> timedelta:
    """Trend bucket: an hour up to two days, a day up to 62 days, a week up to three years,
    beyond that whole days enough for at most ``MAX_BUCKETS`` (a window typed as 2026 to
    9999 must not make a trend of 400,000 weeks)."""
    span = until - since
    if span <= timedelta(days=2):
        return timedelta(hours=1)
    if span <= timedelta(days=62):
        return timedelta(days=1)
    if span <= timedelta(weeks=MAX_BUCKETS):
        return timedelta(days=7)
    return timedelta(days=-(-span.days // MAX_BUCKETS) + 1)


MAX_BUCKETS = 156


def summarize(
    holdings: Iterable[Holding],
    since: datetime,
    until: datetime,
    *,
    prices: Mapping[str, Any] | None = None,
    currency: str = "",
    team_labels: Mapping[str, Mapping[str, str]] | None = None,
    team_key: str = "",
    teams: Mapping[str, str] | None = None,
    not_counted: int = 0,
) -> Report:
    """Totals over [since, until) of ``holdings`` (see ``Row``), with a trend of allocated
    GPU-hours per namespace in buckets of ``bucket_for``. Raises ``ValueError`` when
    ``until`` is not after ``since``."""
    if until <= since:
        raise ValueError("the window's end must be after its start")
    billed = capped_per_device(list(holdings), since, until)
    prices = prices or {}
    labels = team_labels or {}
    bucket = bucket_for(since, until)
    edges: list[datetime] = []
    t = since
    while t < until:
        edges.append(t)
        if until - t <= bucket:  # the last bucket: the next edge may lie past datetime.max
            break
        t += bucket
    rows: dict[tuple[str, str, str], Row] = {}
    trend: dict[tuple[datetime, str], float] = {}
    for h, parts in billed:
        gpu_hours = sum(held_seconds(a, b, since, until) / 3600 * share for a, b, share in parts if share > 0)
        if gpu_hours <= 0:
            continue
        row = rows.get((h.cluster, h.namespace, h.product))
        if row is None:
            row = rows[(h.cluster, h.namespace, h.product)] = Row(
                h.cluster, h.namespace, team_of(h.namespace, labels, team_key, teams), h.product, price=price_of(h.product, prices),
            )  # fmt: skip
        row.gpu_hours += gpu_hours
        row.claims.add(h.claim_uid or h.claim)
        row.devices += 1
        if h.utilization is None:
            row.hours_unknown += gpu_hours
        else:
            used = gpu_hours * min(100.0, max(0.0, h.utilization)) / 100
            if h.basis == MEASURED:
                row.hours_measured += gpu_hours
                row.used_measured += used
            else:
                row.hours_estimated += gpu_hours
                row.used_estimated += used
        for start, end, share in parts:
            first = 0 if start is None or start <= since else int((start - since) / bucket)
            for edge in edges[first:]:
                if end is not None and edge >= end:
                    break
                s = held_seconds(start, end, edge, edge + bucket if until - edge > bucket else until)
                if s > 0 and share > 0:
                    trend[(edge, h.namespace)] = trend.get((edge, h.namespace), 0.0) + s / 3600 * share
    ordered = sorted(rows.values(), key=lambda r: (r.cluster, r.namespace, r.product))
    points = sorted(((e, ns, v) for (e, ns), v in trend.items()), key=lambda p: (p[0], p[1]))
    return Report(since, until, currency, ordered, points, bucket, not_counted)
