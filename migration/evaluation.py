"""Adapt stored clusters to the pure planner and checklist, and store checklist transitions.

Thin shell: records come from the cluster model the sync keeps (``inventory.model``; read back
with ``inventory.exports.load_model`` when none is held; the same records a
snapshot gives), attestations from ``migration.models.Attestation``; the pure cores
(``migration.readiness``, ``migration.planner``) do all the reasoning.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from django.utils import timezone

from inventory import model_codec
from inventory.exports import load_model, stored_raw
from inventory.model import ClusterModel
from inventory.models import Cluster, Device, Node
from inventory.records import KubeRecord, as_records
from migration.blockers import parse_version
from migration.models import Attestation, ReadinessEvaluation, StoredPlan, Trigger, items_fingerprint
from migration.planner import MigrationPlan, plan_records
from migration.readiness import READINESS_KINDS, Readiness, evaluate_readiness

log = logging.getLogger(__name__)
WEEK = timedelta(days=7)


def server_version_for(cluster: Cluster, objects: Iterable[Any] | None = None) -> str | None:
    """The cluster's Kubernetes version: the API server's ``gitVersion`` the live sync stored,
    else the newest kubelet version of its nodes (``Node.kubelet_version``, from
    ``status.nodeInfo.kubeletVersion``; snapshots carry no server version, and kubelets are
    never newer than the API server, so this is a lower bound). ``objects`` (raw objects or
    records) stand in for the stored nodes when given."""
    if cluster.server_version:
        return cluster.server_version
    if objects is None:
        versions = list(Node.objects.filter(cluster=cluster).values_list("kubelet_version", flat=True))
    else:
        nodes = [o for o in objects if (o.kind if isinstance(o, KubeRecord) else o.get("kind")) == "Node"]
        versions = [n.kubelet_version for n in as_records(nodes, [])]
    known = [(parse_version(v), v) for v in versions if isinstance(v, str) and parse_version(v)]
    return max(known)[1] if known else None


def plan_from_model(cluster: Cluster, target_version: str, model: ClusterModel | None = None) -> MigrationPlan:
    """Plan ``cluster``'s migration from its cluster model (the sync's, else read from the
    stored objects); only the device-plugin workloads the plan patches are read raw, one by
    one (``exports.stored_raw``). Seconds on a large cluster when no model is held: pages
    read ``cluster_plan``, which keeps the result."""
    if model is None:
        model = load_model(cluster)
    recs = list(model.all())
    version = server_version_for(cluster, model.of_kinds(["Node"]))
    return plan_records(recs, version, target_version, lambda ref: stored_raw(cluster, ref.kind, ref.namespace, ref.name))


def cluster_plan(cluster: Cluster, target_version: str) -> MigrationPlan:
    """The stored plan of ``cluster`` for ``target_version``, planned and stored when there
    is none (or it no longer unpickles). See ``StoredPlan``."""
    row = StoredPlan.objects.filter(cluster=cluster, target_version=target_version).only("plan").first()
    if row is not None:
        try:
            stored = pickle.loads(bytes(row.plan))  # noqa: S301 - our own rows, written by store_plan
            # Planned by this code: a plan another release made keeps its wording and its
            # findings until the data changed, so it is planned again instead.
            if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == planner_fingerprint() \
                    and isinstance(stored[1], MigrationPlan):
                return stored[1]
        except Exception:  # the planner's types changed since: plan again
            log.info("stored plan of %s for %s no longer loads; planning again", cluster.name, target_version)
    return store_plan(cluster, target_version)


@cache
def planner_fingerprint() -> str:
    """SHA-256 of the planning code (this package's modules) and the parse layer's."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(model_codec.fingerprint().encode())
    for f in sorted(here.glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def store_plan(cluster: Cluster, target_version: str, now: datetime | None = None,
               model: ClusterModel | None = None) -> MigrationPlan:
    plan = plan_from_model(cluster, target_version, model)
    StoredPlan.objects.update_or_create(
        cluster=cluster, target_version=target_version,
        defaults={"plan": pickle.dumps((planner_fingerprint(), plan), protocol=pickle.HIGHEST_PROTOCOL),
                  "planned_at": now or timezone.now()},
    )
    return plan


def refresh_plans(cluster: Cluster, default_target: str, now: datetime, model: ClusterModel | None = None) -> MigrationPlan:
    """After a sync that changed what the planner reads: drop every stored target's plan and
    store the default target's (the one the plan page opens on), planned from ``model``."""
    StoredPlan.objects.filter(cluster=cluster).exclude(target_version=default_target).delete()
    return store_plan(cluster, default_target, now, model)


def readiness_evidence(cluster: Cluster) -> dict[str, Any]:
    """Stored evidence ``evaluate_readiness`` cannot see in the objects, as keyword arguments:
    ``dcgm_devices_with_metrics``, the devices of ``cluster`` with DCGM samples (one query)."""
    return {"dcgm_devices_with_metrics": Device.objects.filter(cluster=cluster).exclude(metrics={}).count()}


def items_json(result: Readiness, row_of: dict[Any, int]) -> list[dict[str, Any]]:
    return [
        {
            "id": i.id,
            "title": i.title,
            "status": i.status,
            "evidence": list(i.evidence),
            "next_step": i.next_step,
            "attestation_id": row_of.get(i.attestation) if i.attestation is not None else None,
        }
        for i in result.items
    ]


def evaluate_cluster(
    cluster: Cluster, now: datetime, trigger: str = Trigger.SYNC, objects: list[Any] | None = None
) -> tuple[ReadinessEvaluation, bool]:
    """Evaluate the checklist for ``cluster`` at ``now`` and store it if it changed.

    Returns (newest evaluation, created). A result equal to the newest stored one (same
    ``items_fingerprint``) writes nothing and returns that row with ``created=False``.
    Evaluations are never stored back-dated behind a newer row: "newest" is by ``evaluated_at``.
    ``objects``: records (or raw objects) of the cluster; by default its stored cluster model.
    """
    if objects is None:
        objects = list(load_model(cluster).of_kinds(READINESS_KINDS))
    rows = list(Attestation.objects.filter(cluster=cluster, attested_at__lte=now))
    row_of = {}
    core_atts = []
    for a in rows:
        c = a.to_core()
        row_of[c] = a.pk
        core_atts.append(c)
    result = evaluate_readiness(objects, now, core_atts, **readiness_evidence(cluster))
    items = items_json(result, row_of)
    fp = items_fingerprint(items)
    latest = ReadinessEvaluation.objects.filter(cluster=cluster).only("fingerprint", "evaluated_at").first()
    if latest is not None and latest.fingerprint == fp:
        return latest, False
    row = ReadinessEvaluation.objects.create(
        cluster=cluster, evaluated_at=now, trigger=trigger, score=result.score, passed=result.passed,
        total=result.total, stage=result.stage, items=items, fingerprint=fp,
    )
    return row, True


def diff_items(old: ReadinessEvaluation, new: ReadinessEvaluation) -> list[dict[str, Any]]:
    """Items whose status or evidence differ between two evaluations, in checklist order:
    ``{"id", "title", "old", "new", "added": [lines], "removed": [lines]}``."""
    before = {i["id"]: i for i in old.items}
    out = []
    for item in new.items:
        prev = before.get(item["id"])
        old_status = prev["status"] if prev else None
        old_lines = list(prev.get("evidence") or []) if prev else []
        new_lines = list(item.get("evidence") or [])
        added = [x for x in new_lines if x not in old_lines]
        removed = [x for x in old_lines if x not in new_lines]
        if old_status != item["status"] or added or removed:
            out.append({"id": item["id"], "title": item["title"], "old": old_status, "new": item["status"],
                        "added": added, "removed": removed})
    return out


def week_before(latest: ReadinessEvaluation) -> ReadinessEvaluation | None:
    """The newest evaluation of the same cluster at least seven days older than ``latest``."""
    return (
        ReadinessEvaluation.objects.filter(cluster_id=latest.cluster_id, evaluated_at__lte=latest.evaluated_at - WEEK)
        .order_by("-evaluated_at", "-pk")
        .first()
    )
