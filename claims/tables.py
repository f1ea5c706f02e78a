"""The claims list and the stuck queue: their django-tables2 tables (server-side sort on every
column, ``?sort=<column>`` / ``?sort=-<column>``, and pagination), what they export
(``inventory.listexport`` columns), and the chunk hooks that attach related rows to a chunk of
claims in a fixed number of queries.

The pages keep their own row markup (stacked, labelled cells on a phone); the tables decide
the order and the page, and their columns give the header's sort links
(``includes/sort_head.html``). Every order ends with the primary key, so a live refresh never
reshuffles equal rows.
"""

from __future__ import annotations

import django_tables2 as tables
from django.db.models import F, OuterRef, Subquery
from django.db.models.fields.json import KT

from inventory.listexport import Column
from inventory.models import AllocationResult, Node, ResourceClaim

from .models import Finding


def _nulls_last(qs, field: str, descending: bool):
    expr = F(field).desc(nulls_last=True) if descending else F(field).asc(nulls_last=True)
    return qs.order_by(expr, "pk"), True


class ClaimTable(tables.Table):
    """Columns of the claims list; ``Age`` ascending is the youngest claim first, ``Findings``
    ascending the most severe open finding first (claims without one last), ``Requests`` by
    the first request's DeviceClass, ``Devices`` by the first allocated device."""

    claim = tables.Column(accessor="name", verbose_name="Claim", order_by=("namespace", "name", "pk"))
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster", order_by=("cluster__name", "namespace", "name", "pk"))
    state = tables.Column(verbose_name="State", order_by=("state", "namespace", "name", "pk"))
    requests = tables.Column(verbose_name="Requests", empty_values=())
    devices = tables.Column(accessor="pk", verbose_name="Devices")
    node = tables.Column(accessor="node_name", verbose_name="Node", order_by=("node_name", "namespace", "name", "pk"))
    age = tables.Column(accessor="created", verbose_name="Age", order_by=("-created", "pk"))
    findings = tables.Column(accessor="pk", verbose_name="Findings")

    class Meta:
        model = ResourceClaim
        fields = ()
        sequence = ("claim", "cluster", "state", "requests", "devices", "node", "age", "findings")
        order_by = ("cluster",)

    def __init__(self, *args, one_cluster: bool = False, **kwargs):
        self.one_cluster = one_cluster
        super().__init__(*args, **kwargs)

    def order_cluster(self, qs, is_descending):
        # Within one cluster its name orders nothing; without it the (cluster, namespace, name)
        # index gives the page instead of a sort of every claim (5,000 nodes: 93 -> 1 ms).
        keys = ("namespace", "name", "pk") if self.one_cluster else ("cluster__name", "namespace", "name", "pk")
        return qs.order_by(*(f"-{k}" if is_descending else k for k in keys)), True

    def order_requests(self, qs, is_descending):
        qs = qs.annotate(sort_class=KT("requests__0__device_class"))
        return _nulls_last(qs, "sort_class", is_descending)

    def order_devices(self, qs, is_descending):
        first = AllocationResult.objects.filter(claim_id=OuterRef("pk")).order_by("pool", "device_name", "pk")
        return _nulls_last(qs.annotate(sort_device=Subquery(first.values("device_name")[:1])), "sort_device", is_descending)

    def order_findings(self, qs, is_descending):
        worst = Finding.objects.open().filter(claim_id=OuterRef("pk")).order_by("severity_rank", "pk")
        return _nulls_last(qs.annotate(sort_worst=Subquery(worst.values("severity_rank")[:1])), "sort_worst", is_descending)


class FindingTable(tables.Table):
    """Columns of the stuck queue; without ``?sort`` the queue keeps its own order (most severe,
    then longest stuck: ``FindingQuerySet.stuck_order``). ``Severity`` ascending is the most
    severe first, ``Stuck for`` ascending the shortest first (unknown starts last),
    ``Involved`` by the first object after the main one."""

    severity = tables.Column(accessor="severity_rank", verbose_name="Severity", order_by=("severity_rank", "pk"))
    category = tables.Column(verbose_name="Category", order_by=("category", "pk"))
    object = tables.Column(accessor="name", verbose_name="Object", order_by=("kind", "namespace", "name", "pk"))
    cluster = tables.Column(accessor="cluster__name", verbose_name="Cluster", order_by=("cluster__name", "pk"))
    stuck_for = tables.Column(accessor="since", verbose_name="Stuck for")
    finding = tables.Column(accessor="summary", verbose_name="Finding", order_by=("summary", "pk"))
    involved = tables.Column(accessor="pk", verbose_name="Involved")

    class Meta:
        model = Finding
        fields = ()
        sequence = ("severity", "category", "object", "cluster", "stuck_for", "finding", "involved")

    def order_stuck_for(self, qs, is_descending):
        # Shortest first: the latest start first.
        return _nulls_last(qs, "since", not is_descending)

    def order_involved(self, qs, is_descending):
        qs = qs.annotate(sort_kind=KT("involved__1__kind"), sort_name=KT("involved__1__name"))
        kind = F("sort_kind").desc(nulls_last=True) if is_descending else F("sort_kind").asc(nulls_last=True)
        name = F("sort_name").desc(nulls_last=True) if is_descending else F("sort_name").asc(nulls_last=True)
        return qs.order_by(kind, name, "pk"), True


def attach_claim_rows(claims: list[ResourceClaim]) -> None:
    """``c.result_rows`` (allocation results with their device), ``c.open_findings`` (most
    severe first) and ``c.node_stored`` on each claim: 3 queries for all of them."""
    ids = [c.pk for c in claims]
    results: dict[int, list[AllocationResult]] = {}
    for r in AllocationResult.objects.filter(claim_id__in=ids).select_related("device").order_by("pk"):
        results.setdefault(r.claim_id, []).append(r)
    open_findings: dict[int, list[Finding]] = {}
    for f in Finding.objects.open().filter(claim_id__in=ids).only(
        "pk", "claim_id", "category", "severity", "summary", "since", "last_seen"
    ).order_by("severity_rank", "pk"):
        open_findings.setdefault(f.claim_id, []).append(f)
    # A claim's node may not be stored (an allocation naming a node no Node or slice has).
    named = {c.node_name for c in claims if c.node_name}
    stored_nodes = set(Node.objects.filter(cluster_id__in={c.cluster_id for c in claims}, name__in=named)
                       .values_list("cluster_id", "name")) if named else set()
    for c in claims:
        c.result_rows = results.get(c.pk, [])
        c.open_findings = open_findings.get(c.pk, [])
        c.node_stored = (c.cluster_id, c.node_name) in stored_nodes


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
