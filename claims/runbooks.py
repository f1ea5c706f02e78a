"""Runbooks: ``claims/runbooks/<category>.md`` rendered to safe HTML.

The category must be one of ``CATEGORIES`` (the file path is never built from other text).
Markdown may hold raw HTML; the output is sanitized with nh3 (an allow-list), so a runbook
cannot inject scripts or event handlers into the page.
"""

from __future__ import annotations

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


@lru_cache(maxsize=len(CATEGORIES))
def render_runbook(category: str) -> str:
    """The runbook of ``category`` as sanitized HTML. Raises ``UnknownCategory``, ``OSError``."""
    return render_markdown(runbook_path(category).read_text(encoding="utf-8"))
