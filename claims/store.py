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
import threading
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from claims.diagnosis import ClusterState, Thresholds, diagnose
from claims.diagnosis.engine import GLOBAL_CATEGORIES, Findings, ScopeEscaped, run_diagnosis
from claims.diagnosis.findings import Finding as Diagnosis
from claims.diagnosis.scope import Scope, change_scope, close, moved
from claims.diagnosis.state import parse_time
from inventory.bulk import delete_pks, insert_rows, update_rows
from inventory.exports import load_model, stored_of_kind
from inventory.kube import ObjectRef, identity
from inventory.model import ClusterModel
from inventory.models import ClaimState, Cluster, ResourceClaim, SourceKind
from inventory.snapshot import newest_timestamp
from inventory.sync import next_sync_follows

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
                     model: ClusterModel | None = None, change: Change | None = None) -> tuple[list[Diagnosis], datetime]:
    """Diagnose ``cluster`` (plus DCGM scrapes ``prom``, file -> text) from its cluster model:
    the one the sync keeps current (``model``), else read from the stored objects.

    ``change``: what the sync changed (``inventory.sync.ModelAfterSync.change``); when its
    scope (``claims.diagnosis.scope``) is known, only that part of the cluster is diagnosed
    and the result's ``scope`` says which (``record_diagnosis`` then replaces only its
    findings). Returns the findings (engine order) and the ``now`` used: given, else the
    clock for a live cluster and the newest timestamp of a snapshot.
    """
    if model is None:
        model = load_model(cluster)
    state = _state(cluster, model, change) if not prom else None
    if state is not None and _namesakes(state, model):
        state = None  # which namesake a patched state keeps follows the changes' order: built afresh
    keep = not prom and next_sync_follows()  # for the next sync's diagnosis to patch
    if state is None:
        state = ClusterState.from_records(model.all(), prom or {})
        if keep:
            state.index_for_patching()
    if keep:
        with _states_lock:
            _states[cluster.pk] = (model, model.version, state)
    newest = model.newest_timestamp()
    when = now or _clock(cluster, newest)
    scope = None
    # Two claims or pods under one name (a hand-made file): the state holds one of them, and
    # which one may move with any change, so the scope cannot follow it: diagnosed whole.
    namesakes = _namesakes(state, model)
    # A snapshot's clock is its newest timestamp: when the change moved it, every age moved.
    if (change is not None and not prom and not namesakes
            and not (cluster.source_kind == SourceKind.SNAPSHOT and newest != change.newest_before)):
        # Objects written again with nothing their records keep changed are no one's subject.
        change = replace(change, records=[pair for pair in change.records if moved(*pair)])
        scope = change_scope(state, change.records)
    if scope is not None:
        named = _open_global_refs(cluster)

        def widen(refs: set[ObjectRef]) -> Scope:
            refs = refs | named
            return close(state, scope.claims | {(r.namespace or "", r.name) for r in refs if r.kind == "ResourceClaim"},
                         scope.pods | {(r.namespace or "", r.name) for r in refs if r.kind == "Pod"},
                         scope.nodes | {r.name for r in refs if r.kind == "Node"})

        try:
            result = run_diagnosis(state, when, thresholds(), scope=scope, widen=widen)
        except ScopeEscaped as exc:
            log.warning("scoped diagnosis of %s: %s; diagnosing the whole cluster", cluster.name, exc)
        else:
            findings = Findings(result.findings)
            findings.failures, findings.scope = result.failures, result.scope
            findings.uid_of = _state_uids(state, findings)
            # With what the changed objects were: a claim re-created under its name has a new uid.
            findings.scope_uids = _scope_uids(state, result.scope) | {
                _stored_uid(r) for pair in change.records for r in pair if r is not None}
            return findings, when
    findings = diagnose(state, when, thresholds())
    findings.uid_of = _state_uids(state, findings)
    return findings, when


def _namesakes(state: ClusterState, model: ClusterModel) -> bool:
    """Do two claims or pods share a namespace/name (the state, keyed by name, holds fewer)?"""
    return (len(state.claims) != len(model.records.get("ResourceClaim", ()))
            or len(state.pods) != len(model.records.get("Pod", ())))


# Kinds whose stored objects the diagnosis state holds every one of: a ref of these kinds not in
# the state is of an object not stored.
_STATE_KINDS = frozenset({"ResourceClaim", "Pod", "Node", "DeviceClass", "ResourceClaimTemplate", "ResourceSlice"})


def _state_uids(state: ClusterState, findings: list[Diagnosis]) -> dict[Ref, str | None]:
    """The stored uid of each object the findings name, from the state (what ``object_uids``
    asks the database for), None for an object of ``_STATE_KINDS`` that is not stored; the
    refs of other kinds are left to ``object_uids``."""
    slices: dict[str, Any] | None = None
    by_key: dict[str, Any] = {"ResourceClaim": state.claims, "Pod": state.pods, "ResourceClaimTemplate": state.templates}
    by_name: dict[str, Any] = {"Node": state.nodes, "DeviceClass": state.device_classes}
    out: dict[Ref, str | None] = {}
    for f in findings:
        for o in f.objects:
            ref = _ref(o)
            if ref in out or ref[0] not in _STATE_KINDS:
                continue
            kind, ns, name = ref
            if kind == "ResourceSlice":
                slices = slices if slices is not None else {s.name: s for s in state.slices}
                r = slices.get(name)
            elif kind in by_name:
                r = by_name[kind].get(name)
            else:
                r = by_key[kind].get((ns, name))
            out[ref] = _stored_uid(r) if r is not None else None
    return out


# cluster pk -> (the model, its version, the diagnosis state made from it): a worker's next
# diagnosis patches the state with its sync's change instead of building it from every record.
_states: dict[int, tuple[ClusterModel, int, ClusterState]] = {}
_states_lock = threading.Lock()


def _state(cluster: Cluster, model: ClusterModel, change: Change | None) -> ClusterState | None:
    """The state this process made from ``model`` before ``change``, patched with it; None
    when there is none (or the change is not one a patch follows)."""
    if change is None:
        return None
    with _states_lock:
        held = _states.pop(cluster.pk, None)
    if held is None or held[0] is not model or held[1] != change.version_before:
        return None
    return held[2].patched(change.records)


@dataclass(frozen=True)
class Change:
    """What one sync changed, as the diagnosis needs it: (record before, record after) per
    object created, updated or deleted, and the newest timestamp before the change."""

    records: list[tuple[Any, Any]]
    newest_before: str | None
    version_before: int = -1  # the model's ``version`` before the change


def _open_global_refs(cluster: Cluster) -> set[ObjectRef]:
    """Objects the open findings of the whole-cluster rules name: a change in what those
    rules say about a pending claim changes that claim's own findings too."""
    out: set[ObjectRef] = set()
    for involved in Finding.objects.filter(cluster=cluster, resolved_at__isnull=True,
                                           category__in=GLOBAL_CATEGORIES).values_list("involved", flat=True):
        for o in involved or ():
            if isinstance(o, dict) and o.get("kind") in ("ResourceClaim", "Pod", "Node") and o.get("name"):
                out.add(ObjectRef(o["kind"], o.get("namespace") or None, str(o["name"])))
    return out


def _scope_uids(state: ClusterState, scope: Scope) -> set[str]:
    """The uids of the scope's objects (the Finding rows' ``uid`` of their main object)."""
    found = [state.claims.get(k) for k in scope.claims] + [state.pods.get(k) for k in scope.pods]
    found += [state.nodes.get(k) for k in scope.nodes] + [s for s in state.slices if s.name in scope.slices]
    return {_stored_uid(r) for r in found if r is not None}


def _stored_uid(r: Any) -> str:
    return identity(r.kind, r.namespace or "", r.name, r.uid or "")


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
            chunk = qs.filter(name__in=names[i : i + 400]).order_by()
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


def _record_states(cluster: Cluster, rows: list[_ClaimRow], now: datetime, only: set[str] | None = None) -> int:
    """Append a state transition per claim whose state moved since last seen (first seen,
    changed, gone), through the bulk write path (``inventory.bulk``: COPY on PostgreSQL).
    ``only``: the uids of the claims the sync changed (the others' states stand)."""
    seen_rows = ClaimStateSeen.objects.filter(cluster=cluster)
    if only is not None:
        rows = [r for r in rows if r.uid in only]
        seen_rows = seen_rows.filter(uid__in=sorted(only))
    seen = {uid: (pk, state, ns, name) for pk, uid, state, ns, name in seen_rows
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
                     keep_categories: frozenset[str] = frozenset(), changed_claims: set[str] | None = None) -> RecordCounts:
    """Reconcile ``findings`` (one diagnosis of ``cluster`` at ``now``) with the stored rows.

    See the module docstring. ``keep_categories``: categories of rules that failed in this
    diagnosis: their open rows are not resolved (the rule could not say they went away).
    Findings of a scoped diagnosis (their ``scope``) replace only the open rows of the
    scope's main objects and of the whole-cluster categories, and only the claims in
    ``changed_claims`` (uids) get state transitions. Runs in one transaction; raises only
    database errors.
    """
    counts = RecordCounts()
    scope: Scope | None = getattr(findings, "scope", None)
    open_q = Finding.objects.filter(cluster=cluster, resolved_at__isnull=True)
    claim_q = ResourceClaim.objects.filter(cluster=cluster).order_by()  # by key: no ordering index
    fields = ("pk", "uid", "namespace", "name", "state", "node_name")
    if scope is None:
        open_list = list(open_q)
        rows = [_ClaimRow(*v) for v in claim_q.values_list(*fields)]
    else:
        suids = sorted(getattr(findings, "scope_uids", ()))
        open_list = list(open_q.filter(Q(category__in=GLOBAL_CATEGORIES) | Q(uid="")))
        for i in range(0, len(suids), 500):
            open_list.extend(open_q.filter(uid__in=suids[i:i + 500]).exclude(category__in=GLOBAL_CATEGORIES).exclude(uid=""))
        open_list = [r for r in open_list if r.category in GLOBAL_CATEGORIES
                     or scope.covers(ObjectRef(r.kind, r.namespace or None, r.name))]
        # The claims by key, a query per chunk (an OR of both would read every claim of the cluster).
        wanted_uids = sorted(set(suids) | (changed_claims or set()))
        pks = sorted({r.claim_id for r in open_list if r.claim_id})
        found = {}
        for i in range(0, len(wanted_uids), 500):
            found.update((v[0], v) for v in claim_q.filter(uid__in=wanted_uids[i:i + 500]).values_list(*fields))
        pks = [pk for pk in pks if pk not in found]
        for i in range(0, len(pks), 500):
            found.update((v[0], v) for v in claim_q.filter(pk__in=pks[i:i + 500]).values_list(*fields))
        rows = [_ClaimRow(*v) for v in found.values()]
    by_uid = {r.uid: r for r in rows}
    by_pk = {r.pk: r for r in rows}
    refs = {_ref(o) for f in findings for o in f.objects}
    known: dict[Ref, str | None] = getattr(findings, "uid_of", None) or {}
    uids = {r: u for r in refs if (u := known.get(r)) is not None}
    uids.update(object_uids(cluster, {r for r in refs if r not in known}))
    with transaction.atomic():
        counts.state_transitions = _record_states(cluster, rows, now, only=changed_claims if scope is not None else None)
        open_rows = {f.fingerprint: f for f in open_list}
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
                   model: ClusterModel | None = None, change: Change | None = None) -> list[str]:
    """Diagnose ``cluster`` and record the result (the sync hook passes its cluster model and,
    when it knows it, what the sync changed: then only that part is diagnosed again).

    Returns the rules that failed, as messages for the sync run; the findings of the other
    rules are recorded, and the failed rules' open findings are kept as they were."""
    findings, now = diagnose_cluster(cluster, prom, model=model, change=change)
    failures = tuple(getattr(findings, "failures", ()))
    keep = frozenset(c for f in failures for c in f.categories)
    changed = None
    if change is not None:
        changed = {_stored_uid(r) for pair in change.records for r in pair if r is not None and r.kind == "ResourceClaim"}
    counts = record_diagnosis(cluster, findings, now, keep_categories=keep, changed_claims=changed)
    log.info("diagnosis of %s at %s: %s", cluster.name, now.isoformat(), counts.as_dict())
    return [f.message() for f in failures]
