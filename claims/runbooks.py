"""Runbooks: ``claims/runbooks/<category>.md`` rendered to safe HTML.

The category must be one of ``CATEGORIES`` (the file path is never built from other text).
Markdown may hold raw HTML; the output is sanitized with nh3 (an allow-list), so a runbook
cannot inject scripts or event handlers into the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import markdown
import nh3

from claims.diagnosis.findings import CATEGORIES

RUNBOOK_DIR = Path(__file__).resolve().parent / "runbooks"


class UnknownCategory(LookupError):
    """Not a diagnosis category (see ``claims.diagnosis.findings.CATEGORIES``)."""


def runbook_path(category: str) -> Path:
    if category not in CATEGORIES:
        raise UnknownCategory(category)
    return RUNBOOK_DIR / f"{category}.md"


def render_markdown(text: str) -> str:
    """Markdown -> sanitized HTML (fenced code, tables; no scripts, styles or handlers)."""
    html = markdown.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
    return nh3.clean(html, link_rel="noopener noreferrer")


# What a Kubernetes name or namespace can hold (DNS-1123 subdomain): only such values are put
# into commands an engineer copies into a shell.
_SAFE_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
# Placeholder -> the involved object kind whose name fills it.
_PLACEHOLDER_KINDS = {"claim": "ResourceClaim", "pod": "Pod", "node": "Node", "slice": "ResourceSlice", "class": "DeviceClass"}


# A DRA driver's kubelet plugin pod, by the names drivers give their DaemonSet
# (nvidia-dra-driver-gpu-kubelet-plugin-..., dra-example-driver-kubeletplugin-...).
_PLUGIN_MARKS = ("kubelet-plugin", "kubeletplugin")


def placeholder_values(involved: Iterable[Mapping[str, object]], node_name: str = "",
                       claim_uid: str = "", evidence: Mapping[str, object] | None = None) -> dict[str, str]:
    """Values for a runbook's ``<ns>``, ``<claim>``, ``<pod>``, ``<node>``, ``<slice>`` and
    ``<class>`` from a finding's involved objects (``[{kind, namespace, name}]``, main object
    first) and its node: the first object of each kind; ``<ns>`` from the first namespaced one.
    ``<kubelet-plugin-pod>`` and ``<driver-ns>``: the involved Pod that is a driver's kubelet
    plugin (one of the finding's ``evidence["plugin_pods"]``; without them, its name says so)
    and its namespace; ``<claim-uid>`` from ``claim_uid``.
    Values that are not valid Kubernetes names are left out (the placeholder stays)."""
    values: dict[str, str] = {}
    objs = list(involved)
    # The diagnosis names the driver's kubelet-plugin pods it found by their labels and owner
    # DaemonSet (``evidence["plugin_pods"]``); a finding stored before it did falls back to
    # the names drivers give those pods.
    known = (evidence or {}).get("plugin_pods")
    if isinstance(known, list) and known:
        plugin = next((o for o in objs if o.get("kind") == "Pod" and o.get("name") in known), None)
    else:
        plugin = next((o for o in objs if o.get("kind") == "Pod"
                       and any(m in str(o.get("name") or "") for m in _PLUGIN_MARKS)), None)
    if plugin is not None:
        for key, value in (("kubelet-plugin-pod", plugin.get("name")), ("driver-ns", plugin.get("namespace"))):
            if isinstance(value, str) and _SAFE_NAME.fullmatch(value):
                values[key] = value
    if claim_uid and _SAFE_NAME.fullmatch(claim_uid):
        values["claim-uid"] = claim_uid
    for key, kind in _PLACEHOLDER_KINDS.items():
        name = next((str(o.get("name") or "") for o in objs if o.get("kind") == kind), "")
        if key == "node" and not name:
            name = node_name
        if name and _SAFE_NAME.fullmatch(name):
            values[key] = name
    ns = next((str(o.get("namespace")) for o in objs if o.get("namespace")), "")
    if ns and _SAFE_NAME.fullmatch(ns):
        values["ns"] = ns
    return values


def fill_placeholders(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``<key>`` of ``values`` replaced by its value; others left as they are."""
    return re.sub(r"<([a-z][a-z-]*)>", lambda m: values.get(m.group(1), m.group(0)), text)


def render_runbook(category: str, values: Mapping[str, str] | None = None) -> str:
    """The runbook of ``category`` as sanitized HTML, its placeholders filled from ``values``
    (``placeholder_values``). Raises ``UnknownCategory``, ``OSError``."""
    text = _runbook_text(category)
    return render_markdown(fill_placeholders(text, values)) if values else _rendered(category)


@lru_cache(maxsize=len(CATEGORIES))
def _runbook_text(category: str) -> str:
    return runbook_path(category).read_text(encoding="utf-8")


@lru_cache(maxsize=len(CATEGORIES))
def _rendered(category: str) -> str:
    return render_markdown(_runbook_text(category))
