"""Verdicts: what a rule found, as data; renderers turn them into findings.

Pure: no Django. A rule yields ``Verdict``s (or, for the rules not migrated yet, finished
``Finding``s). A verdict says *what* is wrong and *which* objects, and carries the facts the
rule established; the wording (summary, next action) is written once per category by the
renderer registered with ``@renders(category)``. So the text of a category is in one place,
the facts can be tested without parsing sentences, and a rule cannot invent a category: the
engine refuses any category a rule has not declared (``engine.RULES``).

``Verdict.objects``: the involved objects, main one first (as ``Finding.objects``);
``uids``: their ``metadata.uid`` where known, in the same order ("" for an object that is
absent or whose uid is unknown); ``facts``: JSON-serialisable facts (counts, messages,
quoted events), copied into the finding's ``evidence``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from claims.diagnosis.findings import CATEGORIES, Finding
from inventory.kube import ObjectRef

__all__ = ["RENDERERS", "Verdict", "render", "renders"]


@dataclass(frozen=True)
class Verdict:
    """One rule's conclusion about one set of objects (see the module docstring)."""

    category: str
    severity: str
    objects: tuple[ObjectRef, ...]
    uids: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    since: str | None = None


Renderer = Callable[[Verdict], tuple[str, str]]

# category -> function(verdict) -> (summary, next_action)
RENDERERS: dict[str, Renderer] = {}


def renders(category: str) -> Callable[[Renderer], Renderer]:
    """Register the renderer of ``category`` (one per category; a second one raises)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown diagnosis category {category!r}")

    def deco(fn: Renderer) -> Renderer:
        if category in RENDERERS:
            raise ValueError(f"category {category!r} already has a renderer")
        RENDERERS[category] = fn
        return fn

    return deco


def render(v: Verdict) -> Finding:
    """The finding of a verdict: its renderer's summary and next action, the facts (plus
    ``uids``) as evidence. Raises ``KeyError`` when the category has no renderer (a bug: the
    engine turns it into an ``AnalysisFailure``)."""
    summary, action = RENDERERS[v.category](v)
    evidence = dict(v.facts)
    if v.uids:
        evidence["uids"] = list(v.uids)
    return Finding(
        category=v.category,
        severity=v.severity,
        objects=v.objects,
        summary=" ".join(summary.split()),  # one line, whatever the cluster text held
        next_action=action,
        since=v.since,
        evidence=evidence,
    )
