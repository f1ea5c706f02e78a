"""htmx helpers shared by every app's views."""

from __future__ import annotations


def partial_template(request, name: str, partial: str) -> str:
    """``page.html#partial`` for htmx requests (not boosted ones), the full page otherwise."""
    return f"{name}#{partial}" if request.htmx and not request.htmx.boosted else name
