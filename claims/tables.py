"""What the claims list and the stuck queue export (``inventory.listexport`` columns), and the
chunk hooks that attach related rows to a chunk of claims in a fixed number of queries."""

from __future__ import annotations

from inventory.listexport import Column
from inventory.models import AllocationResult, ResourceClaim

from .models import Finding


def attach_claim_rows(claims: list[ResourceClaim]) -> None:
    """``c.result_rows`` (allocation results with their device) and ``c.open_findings`` (most
    severe first) on each claim: 2 queries for all of them."""
    ids = [c.pk for c in claims]
    results: dict[int, list[AllocationResult]] = {}
    for r in AllocationResult.objects.filter(claim_id__in=ids).select_related("device").order_by("pk"):
        results.setdefault(r.claim_id, []).append(r)
    open_findings: dict[int, list[Finding]] = {}
    for f in Finding.objects.open().filter(claim_id__in=ids).only(
        "pk", "claim_id", "category", "severity", "summary", "since", "last_seen"
    ).order_by("severity_rank", "pk"):
        open_findings.setdefault(f.claim_id, []).append(f)
    for c in claims:
        c.result_rows = results.get(c.pk, [])
        c.open_findings = open_findings.get(c.pk, [])


def _requests(c: ResourceClaim) -> list[str]:
    out = []
    for r in c.requests or []:
        n = r.get("count") or r.get("mode") or ""
        out.append(f"{r.get('name', '')}: {n} {r.get('device_class', '')}".replace("  ", " ").strip())
    return out


CLAIM_EXPORT = [
    Column("cluster", lambda c: c.cluster.name),
    Column("namespace", lambda c: c.namespace),
    Column("name", lambda c: c.name),
    Column("state", lambda c: c.state),
    Column("created", lambda c: c.created),
    Column("allocated_at", lambda c: c.allocated_at),
    Column("deletion_timestamp", lambda c: c.deletion_timestamp),
    Column("node", lambda c: c.node_name),
    Column("requests", _requests),
    Column("devices", lambda c: [f"{r.driver}/{r.pool}/{r.device_name}" for r in getattr(c, "result_rows", [])]),
    Column("open_findings", lambda c: [f.category for f in getattr(c, "open_findings", [])]),
]

FINDING_EXPORT = [
    Column("severity", lambda f: f.severity),
    Column("category", lambda f: f.category),
    Column("cluster", lambda f: f.cluster.name),
    Column("kind", lambda f: f.kind),
    Column("namespace", lambda f: f.namespace),
    Column("name", lambda f: f.name),
    Column("node", lambda f: f.node_name),
    Column("since", lambda f: f.since),
    Column("first_seen", lambda f: f.first_seen),
    Column("last_seen", lambda f: f.last_seen),
    Column("summary", lambda f: f.summary),
    Column("next_action", lambda f: f.next_action),
    Column("runbook", lambda f: f"{f.get_runbook_url()}?finding={f.pk}"),
]
