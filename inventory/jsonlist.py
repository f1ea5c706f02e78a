"""Walk the ``items`` of a Kubernetes ``List`` JSON text one item at a time.

Pure: no Django. ``kubectl get -o json`` and every API list response are one JSON object whose
``items`` array holds the objects. Decoding the whole text at once builds every object as
Python dicts (about five times the text's size) before the first one can be stored; walking
the array with the standard library's own scanner (``JSONDecoder.raw_decode``) decodes one
item at a time and also gives each item's exact text, which the sync stores as the object's
raw JSON without encoding it again.

Only the top level is walked here; each item is decoded by ``json`` itself, so the accepted
syntax is exactly the standard library's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


class NotAList(ValueError):
    """The text is valid JSON so far but not an object with an ``items`` array."""


@dataclass
class ListHead:
    """The top-level keys of the List other than ``items`` (``kind``, ``apiVersion``,
    ``metadata``), filled in as the walk passes them; complete once the walk has ended."""

    fields: dict[str, Any] = field(default_factory=dict)
    # True once the closing brace of the top-level object was read.
    complete: bool = False


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _expect(text: str, pos: int, char: str) -> int:
    pos = _skip(text, pos)
    if text[pos : pos + 1] != char:
        raise json.JSONDecodeError(f"Expecting {char!r}", text, pos)
    return pos + 1


def iter_items(text: str, head: ListHead | None = None) -> Iterator[tuple[Any, str]]:
    """Yield ``(item, item_text)`` for each element of the top-level object's ``items`` array.

    ``item_text`` is the element's exact slice of ``text`` (as compact or as indented as the
    file). Top-level keys before and after ``items`` are decoded into ``head.fields``, so for
    an object without ``items`` (a single Kubernetes object) ``head.fields`` ends up holding
    the whole object. An object with an ``items`` array is taken as a List whatever its
    ``kind`` says (no Kubernetes object has a top-level ``items``).
    Raises ``json.JSONDecodeError`` for invalid JSON (at the position found, after yielding
    the items before it) and ``NotAList`` when the top level is not an object, its ``items``
    is not an array, or it has no ``items`` (then nothing was yielded).
    """
    head = head if head is not None else ListHead()
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "{":
        raise NotAList("top level is not a JSON object")
    pos += 1
    seen_items = False
    first = True
    while True:
        pos = _skip(text, pos)
        if text[pos : pos + 1] == "}":
            pos += 1
            break
        if not first:
            pos = _expect(text, pos, ",")
            pos = _skip(text, pos)
        first = False
        key, pos = _DECODER.raw_decode(text, pos)
        if not isinstance(key, str):
            raise json.JSONDecodeError("Expecting property name", text, pos)
        pos = _skip(text, _expect(text, pos, ":"))
        if key != "items":
            head.fields[key], pos = _DECODER.raw_decode(text, pos)
            continue
        if text[pos : pos + 1] != "[":
            raise NotAList('"items" is not an array')
        seen_items = True
        pos = _skip(text, pos + 1)
        if text[pos : pos + 1] == "]":
            pos += 1
            continue
        while True:
            item, end = _DECODER.raw_decode(text, pos)
            yield item, text[pos:end]
            pos = _skip(text, end)
            if text[pos : pos + 1] == "]":
                pos += 1
                break
            pos = _skip(text, _expect(text, pos, ","))
    if _skip(text, pos) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, pos))
    head.complete = True
    if not seen_items:
        raise NotAList("object has no items array")
