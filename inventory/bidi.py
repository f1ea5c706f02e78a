"""Bidirectional-text controls in cluster text are shown, not obeyed.

Names, labels, annotations, event messages and attribute values come from the cluster. A
right-to-left override (U+202E) or isolate (U+2066-U+2069) in one of them reorders what
follows it on the page, so ``gpu-node-7<RLO>0fni`` reads as another object's name
("Trojan Source"), and a page could show a command that is not what it copies. Every control
that changes direction (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates,
U+200E/U+200F marks, U+061C the Arabic letter mark) is replaced by its visible code point,
``[U+202E]``.

Where: ``BidiNeutralizingMiddleware`` rewrites every HTML response (pages and htmx partials)
in one pass over the bytes, so no template can forget; Claimscope's own templates contain no
such character. ``neutralize`` (and the template filter ``nobidi`` in ``inventory.templatetags.bidi``)
is for text that leaves as something else (plain text, an attribute built in Python, a title).
JSON responses and downloads keep the cluster's bytes exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_TABLE = {ord(c): f"[U+{ord(c):04X}]" for c in CONTROLS}
# The same characters as UTF-8 bytes (a fixed pattern of ours, never built from input).
_UTF8 = re.compile(rb"\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c")


def neutralize(text: str) -> str:
    """``text`` with each bidi control replaced by ``[U+XXXX]`` (other text unchanged)."""
    return text.translate(_TABLE) if isinstance(text, str) else text


def _visible(match: re.Match[bytes]) -> bytes:
    return f"[U+{ord(match.group().decode('utf-8')):04X}]".encode()


def neutralize_utf8(data: bytes) -> bytes:
    """``neutralize`` on UTF-8 bytes, without decoding them (unchanged bytes come back as is)."""
    return _UTF8.sub(_visible, data) if _UTF8.search(data) else data


class BidiNeutralizingMiddleware:
    """Rewrites the body of every non-streaming ``text/html`` UTF-8 response (``neutralize_utf8``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(response, "streaming", False):
            return response
        ctype = response.get("Content-Type", "")
        if not ctype.startswith("text/html") or (response.charset or "utf-8").lower() not in ("utf-8", "utf8"):
            return response
        body = neutralize_utf8(response.content)
        if body is not response.content:
            response.content = body
            if response.has_header("Content-Length"):
                response["Content-Length"] = str(len(body))
        return response
