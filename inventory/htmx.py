"""htmx helpers shared by every app's views."""

from __future__ import annotations

import hashlib

from django.http import HttpResponse
from django.shortcuts import render

# A live table's last content hash, sent back by static/js/live.js with its next refresh.
SEEN_HEADER = "X-Claimscope-Seen"
CONTENT_HEADER = "X-Claimscope-Content"


def partial_template(request, name: str, partial: str) -> str:
    """``page.html#partial`` for htmx requests (not boosted ones), the full page otherwise."""
    return f"{name}#{partial}" if request.htmx and not request.htmx.boosted else name


def render_live(request, name: str, partial: str, context: dict) -> HttpResponse:
    """Render ``name`` (``partial`` for htmx requests) for a table that refreshes itself.

    The response names a hash of its bytes (``X-Claimscope-Content``). When an htmx request
    says it shows exactly that (``X-Claimscope-Seen``), the answer is 204 No Content, which
    htmx does not swap: while nothing changed, the reader's selection, scroll and open details
    survive the refresh. The page is rendered either way, so nothing can be stale."""
    response = render(request, partial_template(request, name, partial), context)
    digest = hashlib.sha256(response.content).hexdigest()[:32]
    if request.htmx and request.headers.get(SEEN_HEADER) == digest:
        response = HttpResponse(status=204)
    response[CONTENT_HEADER] = digest
    return response
