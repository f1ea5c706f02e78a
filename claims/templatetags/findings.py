"""Template tags of the claims app: findings on inventory pages without the inventory views
knowing about claims (inventory must not import claims; its templates load this library).

Each tag runs one query, plus one per kind of involved object to link (``claims.links``).
"""

from __future__ import annotations

from django import template
from django.db.models import Count, Min, Q
from django.urls import NoReverseMatch, reverse

from claims.links import attach_object_links
from claims.models import SEVERITY_RANK, Finding, Severity

register = template.Library()


@register.filter
def object_url(ref, cluster_name: str) -> str:
    """URL of the page of an involved object ``{kind, namespace, name}``, or "" (no page)."""
    try:
        kind, ns, name = ref.get("kind"), ref.get("namespace"), ref.get("name")
    except AttributeError:
        return ""
    try:
        if kind == "ResourceClaim" and ns and name:
            return reverse("claims:claim", args=[cluster_name, ns, name])
        if kind == "Pod" and ns and name:
            return reverse("claims:pod", args=[cluster_name, ns, name])
        if kind == "Node" and name:
            return reverse("inventory:node", args=[cluster_name, name])
    except NoReverseMatch:
        return ""
    return ""


def _rows(qs) -> list[Finding]:
    rows = list(qs.open().select_related("cluster").defer("evidence").stuck_order()[:50])
    attach_object_links(rows)
    return rows


@register.inclusion_tag("claims/_object_findings.html")
def node_findings(node) -> dict:
    """Open findings about a node: the node itself or claims allocated on it."""
    rows = _rows(Finding.objects.filter(cluster_id=node.cluster_id, node_name=node.name))
    return {"findings": rows, "title": "Findings on this node", "empty": "No open finding concerns this node."}


@register.inclusion_tag("claims/_object_findings.html")
def device_findings(device) -> dict:
    """Open findings about a device: those of claims allocated it, and findings about its
    node that name no claim (driver, MIG, overlapping-device findings)."""
    about = Q(claim__results__device=device)
    if device.node_name:
        about |= Q(node_name=device.node_name, claim__isnull=True)
    qs = Finding.objects.filter(cluster_id=device.cluster_id).filter(about).distinct()
    return {"findings": _rows(qs), "title": "Findings about this device", "empty": "No open finding concerns this device."}


@register.inclusion_tag("claims/_findings_by_category.html")
def findings_by_category(cluster=None) -> dict:
    """Open findings per category (and per severity) for ``cluster`` or all clusters."""
    qs = Finding.objects.open()
    if cluster is not None:
        qs = qs.filter(cluster=cluster)
    rows = list(
        qs.values("category", "severity", "severity_rank").annotate(n=Count("pk")).order_by("severity_rank", "-n", "category")
    )
    for r in rows:
        r["colour"] = Severity.colour(r["severity"])
    return {"rows": rows, "cluster": cluster}


@register.inclusion_tag("claims/_nodes_with_findings.html")
def nodes_with_findings(cluster=None) -> dict:
    """Nodes with open findings about the node itself (the finding's main object, first in
    ``involved``, is the Node or one of its ResourceSlices: a driver not publishing, an empty
    pool, MIG instances missing), warnings and worse, most severe first; at most 20. A node
    whose driver is down still reports Ready to Kubernetes: this is where the overview shows it."""
    qs = Finding.objects.open().filter(involved__0__kind__in=["Node", "ResourceSlice"]).exclude(node_name="")
    if cluster is not None:
        qs = qs.filter(cluster=cluster)
    rows = list(
        qs.values("cluster__name", "node_name")
        .annotate(worst=Min("severity_rank"), n=Count("pk"))
        .filter(worst__lte=SEVERITY_RANK[Severity.WARNING])
        .order_by("worst", "cluster__name", "node_name")[:20]
    )
    names = {v: k for k, v in SEVERITY_RANK.items()}
    for r in rows:
        r["severity"] = names[r["worst"]]
        r["colour"] = Severity.colour(r["severity"])
    return {"rows": rows, "cluster": cluster}
