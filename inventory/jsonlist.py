"""Split a Kubernetes ``List`` JSON document into its items without decoding them.

Pure: no Django. ``kubectl get -o json`` and every API list response are one JSON object whose
``items`` array holds the objects. ``msgspec`` splits that array into ``msgspec.Raw`` slices
of the input (no copy, no Python objects built) and reads each item's identity (kind,
apiVersion, metadata.name/namespace/uid/resourceVersion) while skipping the rest at C speed.
The sync then decodes only the objects whose ``resourceVersion`` it has not stored yet, and
stores an item's exact text as its raw JSON instead of encoding it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""


class _Head(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""
    metadata: _Meta | None = None


class _List(msgspec.Struct):
    items: list[msgspec.Raw] | None = None
    kind: str = ""
    apiVersion: str = ""
    metadata: Any = None  # a List's own metadata is small: decoded as is


_LIST = msgspec.json.Decoder(_List)
_HEAD = msgspec.json.Decoder(_Head)
_ANY = msgspec.json.Decoder()


class JSONError(ValueError):
    """The text is not valid JSON (message from the decoder, with the byte position)."""


@dataclass(frozen=True)
class Head:
    """An item's identity, read without decoding the rest of it. Empty strings when absent."""

    kind: str
    api_version: str
    name: str
    namespace: str
    uid: str
    resource_version: str


@dataclass(frozen=True)
class ListDoc:
    """``items``: each item's exact bytes (a view of the input); the List's ``kind`` and
    ``api_version``; ``continue_token``: ``metadata.continue`` of an API list page ("" on the
    last page and in files)."""

    items: list[msgspec.Raw]
    kind: str
    api_version: str
    continue_token: str


def split_list(data: bytes | str) -> ListDoc | None:
    """The items of a JSON object holding an ``items`` array, or None for any other JSON value
    (a single Kubernetes object, an array, a scalar). Raises ``JSONError`` for invalid JSON.

    An object with an ``items`` array is taken as a List whatever its ``kind`` (no Kubernetes
    object has a top-level ``items``).
    """
    try:
        doc = _LIST.decode(data)
    except msgspec.ValidationError:
        return None  # valid JSON of another shape: ``items`` not an array, not an object...
    except msgspec.DecodeError as exc:
        raise JSONError(str(exc)) from exc
    except RecursionError as exc:
        raise JSONError("JSON is nested too deeply") from exc
    if doc.items is None:
        return None
    token = doc.metadata.get("continue") if isinstance(doc.metadata, dict) else None
    return ListDoc(items=doc.items, kind=doc.kind, api_version=doc.apiVersion,
                   continue_token=token if isinstance(token, str) else "")


def head(raw: msgspec.Raw | bytes) -> Head | None:
    """The identity of one item; None when its kind, apiVersion or metadata fields are not
    of the expected types (the caller decodes such an item in full and lets validation speak)."""
    try:
        h = _HEAD.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    m = h.metadata or _Meta()
    return Head(h.kind, h.apiVersion, m.name, m.namespace, m.uid, m.resourceVersion)


def decode(raw: msgspec.Raw | bytes | str) -> Any:
    """Decode JSON text into plain dicts, lists, str, int, float, bool and None.

    Raises ``JSONError`` for invalid JSON."""
    try:
        return _ANY.decode(raw)
    except msgspec.DecodeError as exc:
        raise JSONError(str(exc)) from exc
    except RecursionError as exc:
        raise JSONError("JSON is nested too deeply") from exc
