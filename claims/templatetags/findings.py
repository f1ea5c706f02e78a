"""Template tags of the claims app: findings on inventory pages without the inventory views
knowing about claims (inventory must not import claims; its templates load this library).

Each tag runs one query, plus one per kind of involved object to link (``claims.links``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from django import template
from django.db.models import Count, Min, Q
from django.utils import timezone
from django.utils.html import format_html

from claims.links import attach_object_links
from claims.models import SEVERITY_RANK, Finding, Severity
from inventory.templatetags.claimscope import age

register = template.Library()


@register.filter
def object_link(o) -> str:
    """One involved object (``claims.links.ObjectLink``) as every page shows it: a link to its
    page when it has one, "not stored" when its kind has pages but no such object is stored. A
    filter, not an included template: the stuck queue shows about a thousand of them, and each
    include cost more than the rest of the row."""
    text = format_html("{} {}", o.kind, o.label)
    out = format_html('<a href="{}">{}</a>', o.url, text) if o.url else text
    if o.missing:
        out = format_html('{} <span class="badge grey" title="no such object is stored for this cluster">not stored</span>', out)
    if o.role:
        out = format_html('{} <span class="muted">· {}</span>', out, o.role)
    return out


@register.filter
def by_role(links) -> list[tuple[str, list]]:
    """Involved objects in runs of one role, each without it: a page that names the role once
    above its objects instead of on each line."""
    groups: list[tuple[str, list]] = []
    for o in links:
        if not groups or groups[-1][0] != o.role:
            groups.append((o.role, []))
        groups[-1][1].append(replace(o, role=""))
    return groups


def _rows(qs) -> list[Finding]:
    from claims.views import attach_age_reference

    rows = list(qs.open().select_related("cluster").defer("evidence").stuck_order()[:50])
    attach_object_links(rows)
    attach_age_reference(rows)
    return rows


def _frozen_minutes(seconds: float) -> str:
    """The duration text the diagnosis wrote into a summary (``claims.diagnosis.context.minutes``)."""
    from claims.diagnosis.context import minutes

    return minutes(seconds)


def _replace_phrase(text: str, old: str, new: str) -> str:
    """``text`` with each whole occurrence of ``old`` (not inside a longer number or word)
    replaced by ``new``. Plain string search: the summary holds cluster text, so no pattern
    is built from it."""
    out, i = [], 0
    while (j := text.find(old, i)) >= 0:
        before = text[j - 1] if j else " "
        after = text[j + len(old)] if j + len(old) < len(text) else " "
        whole = not before.isalnum() and not after.isalnum()
        out.append(text[i:j] + (new if whole else old))
        i = j + len(old)
    out.append(text[i:])
    return "".join(out)


@register.filter
def live_summary(finding, now: datetime | None = None) -> str:
    """A finding's summary with its duration measured to ``now`` (the page's reference time,
    ``f.age_at``), not to the analysis that wrote it.

    The diagnosis writes "deleting for 47 min" from ``since`` (when the condition began) to
    its run's time, which is the finding's ``last_seen`` (the store moves ``last_seen`` only
    when the text changes). When ``now`` is later, that exact phrase is replaced by
    ``age(since, now)``, the text every age on the pages uses; a summary without it, or one
    read at its analysis time, is returned as it is."""
    text = getattr(finding, "summary", "") or ""
    since, at = getattr(finding, "since", None), getattr(finding, "last_seen", None)
    now = now or getattr(finding, "age_at", None)
    if not (since and at and now) or now <= at:
        return text  # read at (or before) the analysis time: the text is current
    frozen = _frozen_minutes(max(0.0, (at - since).total_seconds()))
    live = age(since, now)
    return text if frozen == live else _replace_phrase(text, frozen, live)


def _parse_time(value) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


@register.simple_tag(takes_context=True)
def ago(context, value) -> str:
    """``{% ago e.last %}``: an Event's (or any) RFC 3339 time as
    ``<time title="2026-... UTC">12 min ago</time>``, measured to the page's ``now`` (the
    context's, else the clock) like every other age; "—" when missing, the text as given when
    it is not a time."""
    return ago_text(value, _page_now(context))


def _page_now(context) -> datetime | None:
    """The page's ``now``; on a page that passes none (the node page), the reference time of
    the cluster of its ``node`` or ``device`` (a snapshot's own clock, ``reference_times``),
    looked up once per rendering."""
    now = context.get("now")
    if now is not None:
        return now
    cache = context.render_context
    if "claims_page_now" not in cache:
        obj = context.get("node") or context.get("device")
        cluster = getattr(obj, "cluster", None)
        found = None
        if cluster is not None:
            from claims.views import reference_times

            found = reference_times({cluster}).get(cluster.pk)
        cache["claims_page_now"] = found
    return cache["claims_page_now"]


def ago_text(value, now: datetime | None = None) -> str:
    """``ago`` with ``now`` passed in."""
    t = _parse_time(value)
    if t is None:
        return "—" if not value else str(value)
    iso = t.strftime("%Y-%m-%d %H:%M:%S UTC")
    return format_html('<time datetime="{}" title="{}">{} ago</time>', t.isoformat(), iso, age(t, now or timezone.now()))


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
