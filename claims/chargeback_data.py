"""Chargeback from the database: the ledger the syncs keep (``ChargebackHolding``), the
claims allocated now, their devices and DCGM values, put through ``claims.chargeback``.

Queries are bounded: a fixed number per cluster (claims, results with their devices, parent
GPUs, ledger rows, device values), never one per claim.

Where each time comes from (docs/chargeback.md):
- start: ``status.allocation.allocationTimestamp`` (``ResourceClaim.allocated_at``), else the
  ledger's first sighting, else the claim's creation;
- end of a holding the syncs no longer see: the ledger's ``end`` (last seen allocated); an
  open ledger row the claims no longer hold ends at the cluster's latest ledger sighting
  (``LedgerSighting``: open rows are held until it);
- end of a holding held now: the window's end for a cluster read live; for a snapshot
  cluster its snapshot time (nothing is known after it).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

from django.conf import settings
from django.db.models import Case, F, Max, Q, TextField, When
from django.db.models.functions import Cast
from django.utils import timezone

from inventory.bulk import insert_rows
from inventory.dcgm import utilization_percent
from inventory.models import AllocationResult, ClaimState, Cluster, Device, DeviceType, ResourceClaim, SourceKind
from inventory.records import parse_object
from inventory.snapshot import latest_credible

from . import chargeback as cb
from .ledger.models import ChargebackHolding, LedgerSighting, seen_until

log = logging.getLogger(__name__)

HELD_STATES = (ClaimState.ALLOCATED, ClaimState.IN_USE, ClaimState.DELETING)
_RESULT_FIELDS = (
    "claim_id", "device_id", "device__driver", "device__pool", "device__name", "device__type", "device__product_name",
    "device__profile", "device__uuid", "device__parent_uuid", "device__memory_bytes",
)  # fmt: skip
# Only a shared device's result carries it: claims without the word are not parsed at all.
_CONSUMED = "consumedCapacity"


def ledger_now(cluster: Cluster, model: Any = None) -> datetime:
    """The time a sync's sighting is recorded at: the clock for a live cluster; for a
    snapshot its newest timestamp (as the diagnosis does), else the clock."""
    return cluster.snapshot_moment(model) or timezone.now()


#: Values per ``__in`` filter (SQLite's bound-parameter limit is far above it).
_CHUNK = 500


def _chunks(values: Collection[Any]) -> Iterable[list[Any]]:
    ordered = sorted(values)
    for i in range(0, len(ordered), _CHUNK):
        yield ordered[i:i + _CHUNK]


def _consumed_by_result(cluster: Cluster, pks: Collection[int] | None = None) -> dict[tuple[int, tuple[str, str, str]], tuple[tuple[str, str], ...]]:
    """(claim pk, device key) -> ``consumedCapacity`` of the held claims (of ``pks``, None:
    all) whose stored object mentions it (a text match narrows the rows; the parse layer
    reads the field)."""
    if pks is None:
        parts = [ResourceClaim.objects.filter(cluster=cluster, state__in=HELD_STATES)]
    else:  # held claims already: by primary key alone
        parts = [ResourceClaim.objects.filter(pk__in=chunk) for chunk in _chunks(pks)]
    rows = [
        c for part in parts
        for c in part.annotate(raw_text=Cast("raw", TextField())).filter(raw_text__contains=_CONSUMED).only("pk", "raw")
    ]  # fmt: skip
    out = {}
    for c in rows:
        try:
            record = parse_object(c.raw)
        except ValueError:
            continue
        for r in getattr(record, "results", ()):
            if r.consumed_capacity:
                out[(c.pk, r.device_key)] = r.consumed_capacity
    return out


def current_holdings(cluster: Cluster, claim_uids: Collection[str] | None = None,
                     end: datetime | None = None) -> tuple[list[cb.Holding], int, dict[tuple[str, str, str], int]]:
    """What the claims stored now hold (start = ``allocated_at``, else creation; ``end``, None:
    still held); only the claims of ``claim_uids`` (``ResourceClaim.uid``) when given, else all.

    Returns (holdings, allocation results not counted, device key -> ``Device`` pk). At most
    six queries for all claims, however many (per 500 claims of ``claim_uids``): held
    claims, their results with devices, results naming no stored device, the claims with a
    ``consumedCapacity`` (parsed), those devices' capacities, parent GPUs' memory (only for
    MIG devices the profile tables do not know).
    """
    if claim_uids is None:
        held_claims = ResourceClaim.objects.filter(cluster=cluster, state__in=HELD_STATES)
        claims = {pk: rest for pk, *rest in held_claims.values_list("pk", "uid", "name", "namespace", _start())}
        # The cluster's results, kept when their claim is held. Not joined to the claims: right
        # after a large first sync the planner's statistics still say "a few rows" and it
        # crossed two indexes once per claim (2.5 s for 7,500 results on PostgreSQL).
        every = AllocationResult.objects.filter(cluster=cluster).order_by()
        results = sorted((r for r in every.filter(device__isnull=False).values_list(*_RESULT_FIELDS, "pk")
                          if r[0] in claims), key=lambda r: (r[0], r[-1]))  # fmt: skip
        unresolved = sum(1 for pk in every.filter(device__isnull=True).values_list("claim_id", flat=True) if pk in claims)
    else:
        # By uid alone and unordered, so the (cluster, uid) key is the index used (the state
        # index, or the (namespace, name) order, would read every claim); the state is checked here.
        claims = {
            pk: rest for chunk in _chunks(claim_uids)
            for pk, state, *rest in ResourceClaim.objects.filter(cluster=cluster, uid__in=chunk).order_by()
            .values_list("pk", "state", "uid", "name", "namespace", _start()) if state in HELD_STATES
        }  # fmt: skip
        results, unresolved = [], 0
        for chunk in _chunks(claims):
            held = AllocationResult.objects.filter(claim_id__in=chunk)  # this cluster's claims: by the claim's index
            results += held.filter(device__isnull=False).values_list(*_RESULT_FIELDS).order_by("claim_id", "pk")
            unresolved += held.filter(device__isnull=True).count()
        results.sort(key=lambda r: r[0])  # by claim, each claim's results in their stored order
    consumed = (_consumed_by_result(cluster) if claim_uids is None else _consumed_by_result(cluster, claims)) if results else {}
    capacities: dict[int, dict[str, str]] = {}
    shared_pks = {r[1] for r in results if (r[0], (r[2], r[3], r[4])) in consumed}
    if shared_pks:
        capacities = {pk: {str(k): str(v) for k, v in (cap or {}).items()}
                      for pk, cap in Device.objects.filter(pk__in=shared_pks).values_list("pk", "capacity")}
    devices: dict[int, cb.GpuDevice] = {}
    for r in results:
        if r[1] not in devices:
            devices[r[1]] = cb.GpuDevice(
                key=(r[2], r[3], r[4]), type=r[5], product=r[6] or "", profile=r[7] or "", uuid=r[8] or "",
                parent_uuid=r[9] or "", memory_bytes=r[10], capacity=capacities.get(r[1], {}),
            )  # fmt: skip
    parent_memory: dict[str, int | None] = {}
    if any(cb.needs_parent_memory(d) for d in devices.values()):
        gpus = Device.objects.filter(cluster=cluster, type=DeviceType.GPU).exclude(uuid="")
        if claim_uids is None:
            parent_memory = dict(gpus.values_list("uuid", "memory_bytes"))
        else:  # only the parents of these claims' MIG devices
            wanted = {d.parent_uuid for d in devices.values() if d.parent_uuid and cb.needs_parent_memory(d)}
            parent_memory = {u: m for chunk in _chunks(wanted) for u, m in gpus.filter(uuid__in=chunk).values_list("uuid", "memory_bytes")}
    out: list[cb.Holding] = []
    skipped = unresolved
    latest = latest_credible()
    for r in results:
        c = claims.get(r[0])
        if c is None:
            continue
        dev = devices[r[1]]
        uid, name, namespace, start = c
        h = cb.result_holding(
            cluster.name, namespace, name, uid, dev, consumed.get((r[0], dev.key), ()),
            parent_memory.get(dev.parent_uuid) if dev.parent_uuid else None,
            start if start is None or start <= latest else None,  # a time yet to come is no start: the first sighting is
            end,
        )  # fmt: skip
        if h is None:
            skipped += 1
        else:
            out.append(h)
    return out, skipped, {d.key: pk for pk, d in devices.items()}


def _start() -> Case:
    """A holding's start: its claim's allocation, else its creation (one timestamp per claim
    read); an allocation time yet to come is no allocation time (``latest_credible``: taken as
    a window's end, it would empty the report of every cluster)."""
    return Case(When(allocated_at__lte=latest_credible(), then=F("allocated_at")), default=F("created"))


def _key(claim_uid: str, device: tuple[str, str, str]) -> tuple[str, str, str, str]:
    return (claim_uid, *device)


def ledger_sighting(cluster: Cluster) -> datetime | None:
    """The cluster's latest ledger sighting (``LedgerSighting.at``): every open ledger row was
    seen held then. None when no sync recorded the ledger yet. One query."""
    return LedgerSighting.objects.filter(cluster=cluster).values_list("at", flat=True).first()


def changed_claims(cluster: Cluster, changes: Any, model: Any = None) -> set[str] | None:
    """The claims (``ResourceClaim.uid``) whose holdings one sync may have moved, from its
    change set (``inventory.changes.ChangeSet``) and the held model (``ClusterModel``, for
    the pools of the ResourceSlices it created or updated); None when that cannot be told
    (the change set is incomplete, or a changed slice is not in the model): every claim.

    They are the claims created, updated or deleted, and when slices changed: the claims
    whose allocation results name a device of a changed slice's pool, those with an open
    ledger row on such a pool, and those with a result naming no stored device (a deleted
    slice's devices are gone: their results no longer resolve). A few indexed queries,
    none when no slice changed."""
    if changes is None or changes.incomplete:
        return None
    uids = set(changes.uids("ResourceClaim"))
    put = changes.created.get("ResourceSlice", set()) | changes.updated.get("ResourceSlice", set())
    if not put and not changes.deleted.get("ResourceSlice"):
        return uids
    slices = model.records.get("ResourceSlice", {}) if model is not None else {}
    pools: set[tuple[str, str]] = set()
    for uid in put:
        record = slices.get(uid)
        if record is None:
            return None
        pools.add((record.driver, record.pool))
    results = AllocationResult.objects.filter(cluster=cluster)
    for chunk in _chunks({p for _, p in pools}):
        drivers = {d for d, _ in pools}
        uids.update(u for d, p, u in results.filter(driver__in=drivers, pool__in=chunk)
                    .values_list("driver", "pool", "claim__uid") if (d, p) in pools)  # fmt: skip
        uids.update(u for d, p, u in ChargebackHolding.objects.filter(cluster=cluster, end__isnull=True, pool__in=chunk)
                    .values_list("driver", "pool", "claim_uid") if (d, p) in pools)  # fmt: skip
    # Through the device key's index (results naming no stored device are few, in any
    # cluster); the cluster's index would read every result.
    uids.update(u for c, u in AllocationResult.objects.filter(device__isnull=True).values_list("cluster_id", "claim__uid")
                if c == cluster.pk)  # fmt: skip
    return uids


def ledger_claims_for(cluster: Cluster, read: Any, model: Any = None) -> set[str] | None:
    """What ``record_holdings`` must look at after the sync ``read`` (an
    ``inventory.sync`` read: ``changes``, ``analyses_forced``): None (every claim) when the
    analyses are forced, the change set is missing or incomplete, or the cluster's ledger
    was never recorded; else ``changed_claims``."""
    if getattr(read, "analyses_forced", True) or ledger_sighting(cluster) is None:
        return None
    return changed_claims(cluster, getattr(read, "changes", None), model)


def record_holdings(cluster: Cluster, now: datetime, claims: Collection[str] | None = None) -> dict[str, int]:
    """Bring the ledger up to what the cluster's claims hold at ``now``: a row for each new
    holding, ``end`` = the previous sighting (the last time it was seen allocated) for those
    no longer held, and the cluster's sighting moved to ``now`` (the open rows are held
    until it: no write per row). ``claims``: the claim uids that may have changed
    (``changed_claims``); the others' rows stand. None: every claim (a full recompute).

    Returns {opened, closed, held (holdings of the claims looked at), full (1 for a full
    recompute)}. A fixed number of statements for a full recompute (closings in batches
    of 1,000; inserts through the sync's bulk path); per 500 claims of ``claims``."""
    previous = ledger_sighting(cluster)
    open_rows: dict[tuple[str, str, str, str], int] = {}
    held: list[cb.Holding] = []
    if claims is None or claims:
        held, _, _ = current_holdings(cluster, claims)
        rows = ChargebackHolding.objects.filter(cluster=cluster, end__isnull=True)
        for part in [rows] if claims is None else [rows.filter(claim_uid__in=chunk) for chunk in _chunks(claims)]:
            open_rows.update({
                _key(r[1], (r[2], r[3], r[4])): r[0]
                for r in part.values_list("pk", "claim_uid", "driver", "pool", "device_name")
            })  # fmt: skip
    current = {_key(h.claim_uid, h.device): h for h in held}
    gone = [pk for k, pk in open_rows.items() if k not in current]
    # Open rows were held until the previous sighting (before the sighting existed, each
    # row's own last_seen was that time).
    closing = {"end": previous, "last_seen": previous} if previous is not None else {"end": F("last_seen")}
    for i in range(0, len(gone), 1000):
        ChargebackHolding.objects.filter(pk__in=gone[i:i + 1000]).update(**closing)
    if not LedgerSighting.objects.filter(cluster=cluster).update(at=now):
        LedgerSighting.objects.create(cluster=cluster, at=now)
    new = [
        {"cluster_id": cluster.pk, "claim_uid": h.claim_uid, "namespace": h.namespace, "claim_name": h.claim,
         "driver": h.device[0], "pool": h.device[1], "device_name": h.device[2], "product": h.product, "kind": h.kind,
         "share": h.share, "start": h.start or now, "last_seen": now}
        for k, h in current.items() if k not in open_rows
    ]  # fmt: skip
    insert_rows(ChargebackHolding, new)
    return {"opened": len(new), "closed": len(gone), "held": len(current), "full": int(claims is None)}


def as_of(cluster: Cluster) -> datetime:
    """Until when a cluster's data says anything: the clock for a live cluster; for a
    snapshot its latest ledger sighting (the latest time a ledger row was seen held: a closed
    row's ``last_seen``, the cluster's sighting while any row is open), else its newest
    allocation or creation time that is not yet to come, else the clock."""
    return _snapshot_moment(cluster) or timezone.now()


def _snapshot_moment(cluster: Cluster) -> datetime | None:
    """``as_of`` of a snapshot cluster whose data holds a time; None for a live cluster or a
    snapshot without one (no claim, or only times yet to come)."""
    if cluster.source_kind != SourceKind.SNAPSHOT:
        return None
    agg = ChargebackHolding.objects.filter(cluster=cluster).aggregate(
        closed=Max("last_seen", filter=Q(end__isnull=False)), open=Max("last_seen", filter=Q(end__isnull=True)))
    seen = [t for t in (agg["closed"], agg["open"] and seen_until(None, agg["open"], ledger_sighting(cluster))) if t]
    if seen:
        return max(seen)
    latest = latest_credible()
    agg = ResourceClaim.objects.filter(cluster=cluster).aggregate(
        a=Max("allocated_at", filter=Q(allocated_at__lte=latest)), c=Max("created", filter=Q(created__lte=latest)))
    found = [t for t in (agg["a"], agg["c"]) if t]
    return max(found) if found else None


def cluster_holdings(cluster: Cluster, since: datetime, until: datetime) -> tuple[list[cb.Holding], int, dict[tuple[str, str, str], int]]:
    """Holdings of ``cluster`` that may overlap [since, until): the ledger's ended ones, its
    open ones no claim holds any more (ended at the cluster's latest ledger sighting, until
    which open rows were held) and what claims hold now
    (start from ``allocated_at``, else the ledger's first sighting; a snapshot cluster's end
    at its snapshot time)."""
    snapshot_end = as_of(cluster) if cluster.source_kind == SourceKind.SNAPSHOT else None
    held, skipped, pks = current_holdings(cluster, end=snapshot_end)
    current = {_key(h.claim_uid, h.device): h for h in held}
    # The open rows of what claims hold now add only a first sighting, to a holding without a
    # start: their keys alone are read for the others (at 5,000 nodes, 37,000 rows whose
    # timestamps were parsed for nothing).
    open_rows = ChargebackHolding.objects.filter(cluster=cluster, end__isnull=True)
    wanted = [pk for pk, *key in open_rows.values_list("pk", "claim_uid", "driver", "pool", "device_name")
              if (h := current.get(_key(key[0], tuple(key[1:])))) is None or h.start is None]  # type: ignore[arg-type]
    ended = ChargebackHolding.objects.filter(cluster=cluster, end__gt=since).filter(Q(start__isnull=True) | Q(start__lt=until))
    fields = ("claim_uid", "namespace", "claim_name", "driver", "pool", "device_name", "product", "kind", "share",
              "start", "last_seen", "end")
    rows = chain(ended.values_list(*fields),
                 *(open_rows.filter(pk__in=chunk).values_list(*fields) for chunk in _chunks(wanted)))
    first_seen: dict[tuple[str, str, str, str], datetime] = {}
    sighting = ledger_sighting(cluster)
    out: list[cb.Holding] = []
    for uid, ns, name, driver, pool, dev, product, kind, share, start, last_seen, end in rows:
        key = _key(uid, (driver, pool, dev))
        if end is None and key in current:
            if start:
                first_seen[key] = start
            continue
        out.append(cb.Holding(
            cluster=cluster.name, namespace=ns, claim=name, claim_uid=uid, device=(driver, pool, dev),
            product=product or cb.UNKNOWN_PRODUCT, kind=kind, share=share, start=start,
            end=end or seen_until(end, last_seen, sighting),
        ))  # fmt: skip
    out.extend(replace(h, start=first_seen[key]) if h.start is None and key in first_seen else h
               for key, h in current.items())
    return out, skipped, pks


def _utilization(cluster: Cluster, holdings: Sequence[cb.Holding], since: datetime,
                 until: datetime) -> tuple[list[cb.Holding], list[str]]:
    """Each holding with its device's utilization over the window: ``measured`` from the
    cluster's Prometheus (``avg_over_time``, as the idle page) where it answers, else
    ``estimate`` from the stored latest value when sampled inside the window. One query per
    500 pools of the holdings' devices (plus Prometheus' two for a polled cluster)."""
    from inventory.prometheus import MetricsUnavailable
    from inventory.telemetry import average_utilization, gpu_neighbours, prometheus_url_for

    keys = {h.device for h in holdings}
    pools = sorted({k[1] for k in keys})
    polled = bool(prometheus_url_for(cluster))
    snapshot = cluster.source_kind == SourceKind.SNAPSHOT
    found: dict[tuple[str, str, str], tuple[int, dict, datetime | None]] = {}
    rows: list[Device] = []
    for i in range(0, len(pools), 500):
        qs = Device.objects.filter(cluster=cluster, pool__in=pools[i:i + 500])
        if polled:  # the DCGM join needs the rows themselves
            for d in qs.only("id", "cluster_id", "driver", "pool", "name", "node_name", "type", "uuid", "parent_uuid",
                             "product_name", "profile", "metrics", "metrics_at", "pci_bus_id", "type_raw", "memory_bytes"):  # fmt: skip
                if (d.driver, d.pool, d.name) in keys:
                    rows.append(d)
                    found[(d.driver, d.pool, d.name)] = (d.pk, d.metrics or {}, d.metrics_at)
        else:
            for pk, driver, pool, name, metrics, at in qs.exclude(metrics={}).values_list(
                    "pk", "driver", "pool", "name", "metrics", "metrics_at"):  # fmt: skip
                if (driver, pool, name) in keys:
                    found[(driver, pool, name)] = (pk, metrics or {}, at)
    measured: dict[int, float] = {}
    errors: list[str] = []
    if rows:
        try:
            window_s = max(1, int((until - since).total_seconds()))
            measured = average_utilization(cluster, rows, gpu_neighbours(rows), window_s, until)
        except MetricsUnavailable as exc:
            errors.append(f"{cluster.name}: {exc}")
    out = []
    for h in holdings:
        got = found.get(h.device)
        if got is None:
            out.append(h)
            continue
        pk, metrics, at = got
        if pk in measured:
            out.append(replace(h, utilization=measured[pk], basis=cb.MEASURED))
            continue
        util = utilization_percent(metrics)
        # A snapshot's values came with its files (their time is the sync's clock unless the
        # samples carry one): they describe the snapshot. A live cluster's must fall in the window.
        recent = snapshot or (at is not None and since <= at <= until)
        out.append(replace(h, utilization=util, basis=cb.ESTIMATE) if util is not None and recent else h)
    return out, errors


def namespace_labels(cluster: Cluster) -> dict[str, dict[str, str]]:
    """Annotations and labels per namespace (a label wins over an annotation of the same
    key), from the cluster's stored Namespace records, for the team column. One query."""
    from inventory.exports import stored_of_kind
    from inventory.records import parse_object

    qs, _ = stored_of_kind(cluster, "Namespace")
    out: dict[str, dict[str, str]] = {}
    for raw in qs.values_list("raw", flat=True):
        ns = parse_object(raw) if isinstance(raw, dict) else None
        if ns is not None:
            out[ns.name] = {**ns.annotations, **ns.labels}
    return out


def build_report(clusters: Iterable[Cluster], since: datetime, until: datetime) -> tuple[cb.Report, list[str]]:
    """The chargeback report of ``clusters`` over [since, until) with the settings' prices,
    currency and team label; plus Prometheus errors (their devices fall back to estimates)."""
    holdings: list[cb.Holding] = []
    labels: dict[str, dict[str, str]] = {}
    skipped = 0
    errors: list[str] = []
    for c in clusters:
        got, n, _ = cluster_holdings(c, since, until)
        got = [h for h in got if cb.held_seconds(h.start, h.end, since, until) > 0]
        got, errs = _utilization(c, got, since, until)
        holdings.extend(got)
        skipped += n
        errors.extend(errs)
        labels.update(namespace_labels(c))
    report = cb.summarize(
        holdings, since, until, prices=settings.CLAIMSCOPE_CHARGEBACK_PRICES, currency=settings.CLAIMSCOPE_CHARGEBACK_CURRENCY,
        team_labels=labels, team_key=settings.CLAIMSCOPE_CHARGEBACK_TEAM_LABEL,
        teams=settings.CLAIMSCOPE_CHARGEBACK_TEAMS, not_counted=skipped,
    )  # fmt: skip
    return report, errors


#: Window presets of the page (``?window=``).
WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30), "90d": timedelta(days=90)}
DEFAULT_WINDOW = "7d"


def parse_moment(text: str | None) -> datetime | None:
    """An ISO 8601 date or date-time (``2026-11-01``, ``2026-11-01T12:00:00Z``) as an aware
    UTC datetime; None when empty. Raises ``ValueError`` for anything else."""
    if not text:
        return None
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    try:  # in UTC, as the database compares it: 9999-12-31T23:59-05:00 is past the calendar's end
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    except OverflowError:
        raise ValueError(f"{text.strip()} lies outside the years 1 to 9999 in UTC") from None


def window(clusters: Sequence[Cluster], since_text: str | None, until_text: str | None, preset: str | None) -> tuple[datetime, datetime]:
    """[since, until) from ISO texts or a preset: ``until`` defaults to the clusters' latest
    ``as_of`` (the clock for live clusters; a snapshot without a time of its own is left out),
    ``since`` to ``until`` minus the preset
    (default 7 days). Raises ``ValueError`` for unreadable times or an empty window."""
    until = parse_moment(until_text)
    if until is None:
        # A snapshot without a time of its own does not pull the window of the others to today.
        moments = [_snapshot_moment(c) if c.source_kind == SourceKind.SNAPSHOT else timezone.now() for c in clusters]
        until = max((m for m in moments if m is not None), default=timezone.now())
    try:
        since = parse_moment(since_text) or until - WINDOWS.get(preset or "", WINDOWS[DEFAULT_WINDOW])
    except OverflowError:
        raise ValueError("the window's start would lie before the year 1") from None
    if until <= since:
        raise ValueError("the window's end must be after its start")
    return since, until
