"""Template filters shared by every app's pages (units, badges, ages)."""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from django import template
from django.utils import timezone
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def gib(value) -> str:
    """Bytes -> ``"79.6 GiB"`` (binary units, as the driver's ``Mi`` quantities are)."""
    if value in (None, ""):
        return "—"
    return f"{int(value) / 2**30:.1f} GiB"


@register.filter
def snake_breaks(value) -> str:
    """A snake_case name (a finding category) that may wrap only after its underscores:
    ``claim_stuck_<wbr>deallocating``, never mid-word. The text is escaped."""
    return mark_safe("_<wbr>".join(conditional_escape(part) for part in str(value).split("_")))  # noqa: S308 - parts escaped


@register.filter
def badge(value, colour: str = "grey"):
    return format_html('<span class="badge {}">{}</span>', colour, value)


@register.filter
def choice_badge(value, choices_cls_name: str):
    """Badge for a TextChoices value; colour from the choices class (never from the string)."""
    from inventory import models as m

    cls = getattr(m, choices_cls_name, None)
    label = cls(value).label if cls and value in cls.values else value
    colour = cls.colour(value) if cls else "grey"
    return format_html('<span class="badge {}">{}</span>', colour, label)


@register.filter
def age(value, now: datetime | None = None) -> str:
    """``datetime`` -> ``"42 min"``, ``"3 h 5 min"``, ``"2 d 4 h"``; ``"—"`` for None."""
    if not value:
        return "—"
    now = now or timezone.now()
    secs = max(0, int((now - value).total_seconds()))
    if secs < 60:
        return f"{secs} s"
    mins = secs // 60
    if mins < 60:
        return f"{mins} min"
    hours, mins = divmod(mins, 60)
    if hours < 48:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def pct(part, whole) -> int:
    """``part`` of ``whole`` in whole percent, halves rounded up (5 of 8 is 63 %, 3 of 8 is
    38 %, so the two add up to 100; Python's ``round`` rounds halves to even: 62 and 38)."""
    try:
        if not whole:
            return 0
        return int((Decimal(100) * Decimal(str(part)) / Decimal(str(whole))).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    except (TypeError, ValueError, ArithmeticError):
        return 0


@register.filter
def get(mapping, key):
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.simple_tag(takes_context=True)
def export_url(context, fmt: str) -> str:
    """This list's download link: the current query string (filters) without ``page``, with
    ``format=fmt`` (``csv`` or ``json``; see ``inventory.listexport``)."""
    params = context["request"].GET.copy()
    params.pop("page", None)
    params["format"] = fmt
    return "?" + params.urlencode()


@register.filter
def pretty_json(value) -> str:
    """A JSON value (from a stored object) as indented text; the template escapes it."""
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _object_link(view: str, kind: str, cluster_name: str, name: str, css: str, stored=None):
    """A link to a cluster object's page; the name as plain text when no object of ``kind``
    can have it (cluster text: ``a/b`` has no page and ``..`` in a link would lead a browser
    to another one; Node and DeviceClass names are DNS-1123 subdomains), or, given the
    ``stored`` names, when the cluster holds none of that name (its page is a 404)."""
    from django.urls import reverse

    from inventory.parse import is_subdomain

    if not is_subdomain(name):
        return format_html('<span class="mono {}" title="not a {} name">{}</span>', css, kind, name)
    if stored is not None and name not in stored:
        return format_html('<span class="{}">{}</span> <span class="small muted">not stored</span>', css, name)
    return format_html('<a class="{}" href="{}">{}</a>', css, reverse(view, args=[cluster_name, name]), name)


@register.simple_tag
def node_link(cluster_name: str, name: str, css: str = "", stored=None):
    """A link to a Node's page (a slice's or pod's ``nodeName`` may be any string)."""
    return _object_link("inventory:node", "Node", cluster_name, name, css, stored)


@register.simple_tag
def deviceclass_link(cluster_name: str, name: str, css: str = "", stored=None):
    """A link to a DeviceClass page (a claim may name any string: ``nvidia.com/gpu``, ``..``)."""
    return _object_link("inventory:deviceclass", "DeviceClass", cluster_name, name, css, stored)
