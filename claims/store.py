"""Store the diagnosis of a synced cluster: findings reconciled in bulk, transitions as rows.

``diagnose_cluster(cluster, prom)`` is what the sync hook (``ClaimsConfig.after_sync``) and
``manage.py diagnose --cluster`` call: it takes the cluster model the sync keeps
(``inventory.model``; read from the stored objects when none is given), runs the pure engine
and returns the findings with the ``now`` it used. ``record_diagnosis(cluster, findings, now)`` reconciles them with the
open ``Finding`` rows by fingerprint (category + main object):

- new: created, plus a ``ClaimTransition(field=finding)`` row;
- still reported: updated (and ``last_seen`` moved) only when something in it changed, so a
  re-sync of an unchanged cluster writes no row at all;
- no longer reported: ``resolved_at`` set, plus a transition row.

It also compares each claim's state with the one last seen (``ClaimStateSeen``; the sync has
already overwritten the ResourceClaim row) and appends a ``ClaimTransition(field=state)`` row
per change. Every write is a bulk statement; the work per sync is linear in the number of
claims and findings.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from claims.diagnosis import ClusterState, Thresholds, diagnose
from claims.diagnosis.findings import Finding as Diagnosis
from claims.diagnosis.state import parse_time
from inventory.bulk import delete_pks, insert_rows, update_rows
from inventory.exports import load_model, stored_of_kind
from inventory.model import ClusterModel
from inventory.models import ClaimState, Cluster, ResourceClaim, SourceKind
from inventory.snapshot import newest_timestamp

from .models import SEVERITY_RANK, ClaimStateSeen, ClaimTransition, Finding, TransitionField

log = logging.getLogger(__name__)
BATCH = 1000
UPDATED_FIELDS = ("severity", "severity_rank", "summary", "next_action", "involved", "kind", "namespace",
                  "name", "uid", "claim", "node_name", "since", "evidence", "last_seen", "fingerprint")


@dataclass
class RecordCounts:
    """What one ``record_diagnosis`` wrote (all zero for an unchanged cluster)."""

    created: int = 0
    updated: int = 0
    resolved: int = 0
    unchanged: int = 0
    state_transitions: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def thresholds() -> Thresholds:
    """Thresholds (seconds) from settings ``DIAGNOSIS_*_SECONDS``."""
    return Thresholds(
        pending_seconds=settings.DIAGNOSIS_PENDING_SECONDS,
        allocated_not_reserved_seconds=settings.DIAGNOSIS_ALLOCATED_NOT_RESERVED_SECONDS,
        deleting_seconds=settings.DIAGNOSIS_DELETING_SECONDS,
    )


def diagnosis_now(cluster: Cluster, objects: list[dict[str, Any]]) -> datetime:
    """The clock for a live cluster; for a snapshot its newest timestamp (a snapshot taken
    last week must not make every pending claim look a week old), else the clock."""
    return _clock(cluster, newest_timestamp(objects) if cluster.source_kind == SourceKind.SNAPSHOT else None)


def _clock(cluster: Cluster, newest: str | None) -> datetime:
    if cluster.source_kind == SourceKind.SNAPSHOT:
        when = parse_time(newest)
        if when is not None:
            return when
    return timezone.now()


def diagnose_cluster(cluster: Cluster, prom: dict[str, str] | None = None, now: datetime | None = None,
                     model: ClusterModel | None = None) -> tuple[list[Diagnosis], datetime]:
    """Diagnose ``cluster`` (plus DCGM scrapes ``prom``, file -> text) from its cluster model:
    the one the sync keeps current (``model``), else read from the stored objects.

    Returns the findings (engine order) and the ``now`` used: given, else the clock for a
    live cluster and the newest timestamp of a snapshot.
    """
    if model is None:
        model = load_model(cluster)
    state = ClusterState.from_records(model.all(), prom or {})
    when = now or _clock(cluster, model.newest_timestamp())
    return diagnose(state, when, thresholds()), when


Ref = tuple[str, str, str]  # (kind, namespace or "", name)


def _ref(o: Any) -> Ref:
    return (o.kind, o.namespace or "", o.name)


def object_uids(cluster: Cluster, refs: set[Ref]) -> dict[Ref, str]:
    """The stored uid of each object ``refs`` names (those stored), a query per kind and
    chunk of names: findings name their objects by kind/namespace/name, rows key them by uid."""
    by_kind: dict[str, set[Ref]] = defaultdict(set)
    for ref in refs:
        by_kind[ref[0]].add(ref)
    out: dict[Ref, str] = {}
    for kind, wanted in sorted(by_kind.items()):
        qs, namespaced = stored_of_kind(cluster, kind)
        names = sorted({r[2] for r in wanted})
        for i in range(0, len(names), 400):
            chunk = qs.filter(name__in=names[i : i + 400])
            if namespaced:
                for ns, name, uid in chunk.values_list("namespace", "name", "uid"):
                    out[(kind, ns or "", name)] = uid
            else:
                for name, uid in chunk.values_list("name", "uid"):
                    out[(kind, "", name)] = uid
    return {ref: uid for ref, uid in out.items() if ref in refs}


def fingerprint(f: Diagnosis, uids: dict[Ref, str] | None = None) -> str:
    """``category|kind|uid:<uid>`` of the main object (the engine reports one finding per
    category and main object), ``category|kind|namespace|name`` when it is not stored;
    hashed when longer than the column."""
    main = f.objects[0] if f.objects else None
    uid = (uids or {}).get(_ref(main)) if main else None
    if main and uid:
        text = f"{f.category}|{main.kind}|uid:{uid}"
    else:
        text = legacy_fingerprint(f)
    return text if len(text) <= 800 else f"{f.category}|sha256:{hashlib.sha256(text.encode()).hexdigest()}"


def legacy_fingerprint(f: Diagnosis) -> str:
    """The name-keyed fingerprint of open rows written before findings were keyed by uid."""
    main = f.objects[0] if f.objects else None
    text = f"{f.category}|{main.kind}|{main.namespace or ''}|{main.name}" if main else f"{f.category}||{f.summary}"
    return text if len(text) <= 800 else f"{f.category}|sha256:{hashlib.sha256(text.encode()).hexdigest()}"


def _json(value: Any) -> Any:
    """What the JSON column gives back (tuples become lists), so comparisons are fair."""
    return json.loads(json.dumps(value, default=str))


@dataclass(frozen=True)
class _ClaimRow:
    pk: int
    uid: str
    namespace: str
    name: str
    state: str
    node_name: str


def _fields(f: Diagnosis, claims: dict[str, _ClaimRow], uids: dict[Ref, str]) -> dict[str, Any]:
    """Finding column values for one engine finding (``claim`` as a ``_ClaimRow`` or None),
    its claim found by uid."""
    main = f.objects[0] if f.objects else None
    claim = next((claims[u] for o in f.objects if o.kind == "ResourceClaim"
                  and (u := uids.get(_ref(o))) in claims), None)
    node = next((o.name for o in f.objects if o.kind == "Node"), "") or (claim.node_name if claim else "")
    return {
        "severity": f.severity,
        "severity_rank": SEVERITY_RANK[f.severity],
        "summary": f.summary,
        "next_action": f.next_action,
        "involved": _json([o.to_dict() for o in f.objects]),
        "kind": main.kind if main else "",
        "namespace": (main.namespace or "") if main else "",
        "name": main.name if main else "",
        "uid": uids.get(_ref(main), "") if main else "",
        "claim": claim,
        "node_name": node,
        "since": parse_time(f.since),
        "evidence": _json(f.evidence),
    }


def _transition(cluster: Cluster, row: Finding, claim: _ClaimRow | None, old: str, new: str, reason: str,
                now: datetime) -> ClaimTransition:
    return ClaimTransition(
        cluster=cluster, claim_uid=claim.uid if claim else "",
        namespace=claim.namespace if claim else row.namespace, name=claim.name if claim else row.name,
        field=TransitionField.FINDING, old=old, new=new, reason=reason[:2000], observed_at=now, finding=row,
    )


_STATE_REASONS = {
    (ClaimState.PENDING, ClaimState.ALLOCATED): "status.allocation set",
    (ClaimState.PENDING, ClaimState.IN_USE): "allocated and reserved for a consumer",
    (ClaimState.ALLOCATED, ClaimState.IN_USE): "reservedFor names a consumer",
    (ClaimState.IN_USE, ClaimState.ALLOCATED): "reservedFor emptied; allocation kept",
    (ClaimState.ALLOCATED, ClaimState.PENDING): "allocation cleared",
    (ClaimState.IN_USE, ClaimState.PENDING): "allocation cleared",
}


def _state_reason(old: str, new: str) -> str:
    if not old:
        return "first observed"
    if not new:
        return "claim no longer listed"
    if new == ClaimState.DELETING:
        return "metadata.deletionTimestamp set"
    return _STATE_REASONS.get((old, new), f"{old} -> {new}")


def _record_states(cluster: Cluster, rows: list[_ClaimRow], now: datetime) -> int:
    """Append a state transition per claim whose state moved since last seen (first seen,
    changed, gone), through the bulk write path (``inventory.bulk``: COPY on PostgreSQL)."""
    seen = {uid: (pk, state, ns, name) for pk, uid, state, ns, name in ClaimStateSeen.objects.filter(cluster=cluster)
            .values_list("pk", "uid", "state", "namespace", "name")}
    transitions: list[dict[str, Any]] = []
    create: list[dict[str, Any]] = []
    update: list[tuple[int, dict[str, Any]]] = []
    current = set()

    def transition(uid: str, ns: str, name: str, old: str, new: str) -> None:
        transitions.append({"cluster_id": cluster.pk, "claim_uid": uid, "namespace": ns, "name": name,
                            "field": TransitionField.STATE, "old": old, "new": new,
                            "reason": _state_reason(old, new), "observed_at": now})

    for r in rows:
        current.add(r.uid)
        prev = seen.get(r.uid)
        if prev is not None and prev[1] == r.state:
            continue
        transition(r.uid, r.namespace, r.name, prev[1] if prev else "", r.state)
        if prev is None:
            create.append({"cluster_id": cluster.pk, "uid": r.uid, "namespace": r.namespace, "name": r.name, "state": r.state})
        else:
            update.append((prev[0], {"state": r.state}))
    gone = [(uid, v) for uid, v in seen.items() if uid not in current]
    for uid, (_, state, ns, name) in gone:
        transition(uid, ns, name, state, "")
    insert_rows(ClaimStateSeen, create)
    update_rows(ClaimStateSeen, ["state"], update)
    delete_pks(ClaimStateSeen, [v[0] for _, v in gone])
    insert_rows(ClaimTransition, transitions)
    return len(transitions)


def record_diagnosis(cluster: Cluster, findings: list[Diagnosis], now: datetime,
                     keep_categories: frozenset[str] = frozenset()) -> RecordCounts:
    """Reconcile ``findings`` (one diagnosis of ``cluster`` at ``now``) with the stored rows.

    See the module docstring. ``keep_categories``: categories of rules that failed in this
    diagnosis: their open rows are not resolved (the rule could not say they went away).
    Runs in one transaction; raises only database errors.
    """
    counts = RecordCounts()
    rows = [_ClaimRow(*v) for v in ResourceClaim.objects.filter(cluster=cluster).values_list(
        "pk", "uid", "namespace", "name", "state", "node_name")]
    by_uid = {r.uid: r for r in rows}
    by_pk = {r.pk: r for r in rows}
    uids = object_uids(cluster, {_ref(o) for f in findings for o in f.objects})
    with transaction.atomic():
        counts.state_transitions = _record_states(cluster, rows, now)
        open_rows = {f.fingerprint: f for f in Finding.objects.filter(cluster=cluster, resolved_at__isnull=True)}
        wanted: dict[str, Diagnosis] = {}
        for f in findings:
            wanted.setdefault(fingerprint(f, uids), f)
        create: list[tuple[Finding, _ClaimRow | None]] = []
        update: list[Finding] = []
        for fp, f in wanted.items():
            values = _fields(f, by_uid, uids)
            claim: _ClaimRow | None = values.pop("claim")
            row = open_rows.get(fp)
            adopted = False
            if row is None and (legacy := open_rows.get(legacy_fingerprint(f))) is not None and not legacy.uid:
                # An open row from before findings were keyed by uid: adopt it (keeps first_seen).
                row, adopted = legacy, True
                open_rows[fp] = open_rows.pop(legacy_fingerprint(f))
                row.fingerprint = fp
            if row is None:
                new = Finding(cluster=cluster, category=f.category, fingerprint=fp, first_seen=now, last_seen=now,
                              claim_id=claim.pk if claim else None, **values)
                create.append((new, claim))
                continue
            changed = adopted or row.claim_id != (claim.pk if claim else None)
            for k, v in values.items():
                if getattr(row, k) != v:
                    changed = True
                    setattr(row, k, v)
            if changed:
                row.claim_id = claim.pk if claim else None
                row.last_seen = now
                update.append(row)
            else:
                counts.unchanged += 1
        gone = [row for fp, row in open_rows.items() if fp not in wanted and row.category not in keep_categories]
        transitions: list[ClaimTransition] = []
        if gone:
            for row in gone:
                row.resolved_at = now
                transitions.append(_transition(cluster, row, by_pk.get(row.claim_id), row.category, "",
                                               "no longer diagnosed", now))
            Finding.objects.bulk_update(gone, ["resolved_at"], batch_size=BATCH)
        if update:
            Finding.objects.bulk_update(update, UPDATED_FIELDS, batch_size=BATCH)
        if create:
            made = Finding.objects.bulk_create([r for r, _ in create], batch_size=BATCH)
            for row, (_, claim) in zip(made, create, strict=True):
                transitions.append(_transition(cluster, row, claim, "", row.category, row.summary, now))
        if transitions:
            ClaimTransition.objects.bulk_create(transitions, batch_size=BATCH)
        counts.created, counts.updated, counts.resolved = len(create), len(update), len(gone)
    return counts


def sync_diagnosis(cluster: Cluster, prom: dict[str, str] | None = None,
                   model: ClusterModel | None = None) -> list[str]:
    """Diagnose ``cluster`` and record the result (the sync hook passes its cluster model).

    Returns the rules that failed, as messages for the sync run; the findings of the other
    rules are recorded, and the failed rules' open findings are kept as they were."""
    findings, now = diagnose_cluster(cluster, prom, model=model)
    failures = tuple(getattr(findings, "failures", ()))
    keep = frozenset(c for f in failures for c in f.categories)
    counts = record_diagnosis(cluster, findings, now, keep_categories=keep)
    log.info("diagnosis of %s at %s: %s", cluster.name, now.isoformat(), counts.as_dict())
    return [f.message() for f in failures]
