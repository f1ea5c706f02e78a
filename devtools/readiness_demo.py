"""Demo data for the migration pages: a device-plugin cluster and a readiness history.

``load_legacy_cluster(base_dir)`` syncs ``demo/migration/legacy-dp/`` (a cluster still on the
device plugin: ClusterPolicy, GPU Deployments/StatefulSets/Jobs, time-slicing, Kueue, KServe)
as cluster ``legacy-dp`` through the ordinary sync path. ``seed_readiness_history(cluster,
now)`` adds back-dated checklist evaluations and attestations so the readiness page shows
"since last week" and a history that changes over time.

Seeded rows are marked (evaluations with trigger ``demo``, attestations whose note starts with
``[demo]``) and replaced on every run, so reloading the demo does not pile them up.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from inventory.models import Cluster, SourceKind, SyncRun
from inventory.runs import after_read_hooks
from inventory.sources import SnapshotSource
from inventory.sync import sync_cluster
from migration.evaluation import evaluate_cluster, items_json, readiness_evidence
from migration.models import Attestation, ReadinessEvaluation, Trigger, items_fingerprint
from migration.readiness import FAIL, PASS, UNKNOWN, evaluate_readiness, percent_half_up

LEGACY_CLUSTER = "legacy-dp"
LEGACY_FOLDER = Path("demo") / "migration" / "legacy-dp"
DEMO_NOTE = "[demo]"
DEMO_BY = "platform-oncall"
# Days ago -> how many of the currently met items were not met yet (oldest first).
HISTORY = ((35, 4), (21, 3), (10, 2), (3, 1))


def load_legacy_cluster(base_dir: Path) -> SyncRun:
    path = Path(base_dir) / LEGACY_FOLDER
    cluster, _ = Cluster.objects.get_or_create(
        name=LEGACY_CLUSTER, defaults={"source_kind": SourceKind.SNAPSHOT, "snapshot_path": str(path)}
    )
    if cluster.snapshot_path != str(path):
        cluster.snapshot_path = str(path)
        cluster.save(update_fields=["snapshot_path"])
    return sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks)


def seed_readiness_history(cluster: Cluster, now: datetime) -> int:
    """Replace the demo rows of ``cluster``: back-dated evaluations in which fewer items were
    met, one expired and two valid attestations, then evaluate ``now``. Returns rows written.

    History rows are the current evaluation with the last met items set to ``fail`` and an
    evidence line saying it is demo history, so they never pretend to be a real reading.
    """
    from inventory.exports import cluster_objects

    ReadinessEvaluation.objects.filter(cluster=cluster, trigger=Trigger.DEMO).delete()
    Attestation.objects.filter(cluster=cluster, note__startswith=DEMO_NOTE).delete()
    objects, _ = cluster_objects(cluster.name)
    current = items_json(evaluate_readiness(objects, now, **readiness_evidence(cluster)), {})
    met = [i["id"] for i in current if i["status"] == PASS]
    written = 0
    for days, missing in HISTORY:
        at = now - timedelta(days=days)
        items = [dict(i) for i in current]
        not_yet = set(met[-missing:]) if missing and met else set()
        for i in items:
            if i["id"] in not_yet:
                i["status"] = FAIL
                i["evidence"] = [f"demo history: not met yet on {at:%Y-%m-%d}"]
        passed = sum(1 for i in items if i["status"] == PASS)
        ReadinessEvaluation.objects.create(
            cluster=cluster, evaluated_at=at, trigger=Trigger.DEMO, score=percent_half_up(passed, len(items)),
            passed=passed, total=len(items), stage="demo history", items=items, fingerprint=items_fingerprint(items),
        )
        written += 1
    unknown = [i["id"] for i in current if i["status"] == UNKNOWN]
    url = "https://git.example.com/platform/gpu-cluster"
    if unknown:
        first = unknown[0]
        Attestation.objects.create(
            cluster=cluster, item_id=first, attested_by_name=DEMO_BY, attested_at=now - timedelta(days=100),
            evidence_url=f"{url}/-/commit/4f1c2e9", note=f"{DEMO_NOTE} first review, lapsed",
        )
        Attestation.objects.create(
            cluster=cluster, item_id=first, attested_by_name=DEMO_BY, attested_at=now - timedelta(days=12),
            evidence_url=f"{url}/-/blob/main/values.yaml", note=f"{DEMO_NOTE} versions pinned in the Helm values",
        )
        written += 2
    if len(unknown) > 1:
        Attestation.objects.create(
            cluster=cluster, item_id=unknown[-1], attested_by_name=DEMO_BY, attested_at=now - timedelta(days=80),
            evidence_url=f"{url}/-/wikis/runbooks/replace-gpu-node", note=f"{DEMO_NOTE} node-replacement runbook",
        )
        written += 1
    _row, created = evaluate_cluster(cluster, now, Trigger.ATTESTATION, objects=objects)
    return written + int(created)
