"""Template tags of the claims app: findings on inventory pages without the inventory views
knowing about claims (inventory must not import claims; its templates load this library).

Each tag runs one query, plus one per kind of involved object to link (``claims.links``).
"""

from __future__ import annotations

from django import template
from django.db.models import Count, Q
from django.urls import NoReverseMatch, reverse

from claims.links import attach_object_links
from claims.models import Finding, Severity

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
