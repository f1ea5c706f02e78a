"""Known, fixed Kubernetes bugs (``known_issues.yaml``) and version matching.

Pure: no Django. Each entry: ``id``, ``component`` (kubelet, kube-scheduler, ...),
``introduced`` / ``last_affected`` (inclusive), ``fixed_in``, ``category``, ``symptom``
(``event_contains``: substrings of an event message; or ``state``: a named structural check),
``summary``, ``link``, optional ``workaround`` (what to do until the upgrade, lower case,
no final full stop).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from inventory.kube import parse_version

KNOWN_ISSUES_FILE = Path(__file__).with_name("known_issues.yaml")


@dataclass(frozen=True)
class KnownIssue:
    id: str
    component: str
    introduced: tuple[int, int, int]
    last_affected: tuple[int, int, int]
    fixed_in: str
    category: str
    event_contains: tuple[str, ...]
    state: str | None
    summary: str
    link: str
    workaround: str = ""

    def affects(self, version: tuple[int, int, int] | None) -> bool:
        return version is not None and self.introduced <= version <= self.last_affected

    def matches_message(self, message: str) -> bool:
        return any(s in message for s in self.event_contains)


def _v(text: Any) -> tuple[int, int, int]:
    v = parse_version(str(text))
    if v is None:
        raise ValueError(f"bad version {text!r} in {KNOWN_ISSUES_FILE.name}")
    return v


@lru_cache(maxsize=1)
def load_known_issues(path: str | None = None) -> tuple[KnownIssue, ...]:
    """Parse the YAML file. Raises ValueError on a malformed entry."""
    data = yaml.safe_load(Path(path or KNOWN_ISSUES_FILE).read_text(encoding="utf-8")) or []
    out = []
    for e in data:
        symptom = e.get("symptom") or {}
        out.append(
            KnownIssue(
                id=str(e["id"]),
                component=str(e["component"]),
                introduced=_v(e["introduced"]),
                last_affected=_v(e["last_affected"]),
                fixed_in=str(e["fixed_in"]),
                category=str(e["category"]),
                event_contains=tuple(str(s) for s in symptom.get("event_contains") or []),
                state=symptom.get("state"),
                summary=" ".join(str(e.get("summary", "")).split()),
                link=str(e.get("link", "")),
                workaround=" ".join(str(e.get("workaround", "")).split()),
            )
        )
    return tuple(out)


def issues_for(component: str, version: tuple[int, int, int] | None) -> list[KnownIssue]:
    return [i for i in load_known_issues() if i.component == component and i.affects(version)]
