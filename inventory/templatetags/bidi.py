"""``{% load bidi %}`` then ``{{ value|nobidi }}``: bidi controls shown as ``[U+202E]``
(``inventory.bidi.neutralize``). HTML pages get this from ``BidiNeutralizingMiddleware``
already; the filter is for text rendered into something else (plain text, e-mail, a
``text/plain`` download)."""

from __future__ import annotations

from django import template

from inventory.bidi import neutralize

register = template.Library()


@register.filter(is_safe=True)
def nobidi(value):
    """The value's text with every bidirectional control replaced by its visible code point."""
    return neutralize(value) if isinstance(value, str) else value
