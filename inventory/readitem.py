"""One object as a source read it: who it is at once, the whole object only when needed.

Pure: no Django. A re-sync of a large cluster mostly meets objects it already stored at the
same ``resourceVersion``; a ``ReadItem`` carries the identity read cheaply from the item's
text (``jsonlist.head``) so the sync can skip those without ever decoding them, and decodes
the others on demand (``object()``), keeping their exact text to store as raw JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from . import jsonlist
from .parse import identity

Prepare = Callable[[dict[str, Any]], dict[str, Any]]


class ReadItem:
    """An object read from a source.

    ``kind``, ``name``, ``namespace``, ``uid`` (``identity``) and ``resource_version`` are
    known without decoding. ``object()`` gives the decoded object after the source's own
    ``prepare`` step (normalizing to v1, a default namespace); ``text`` is then its exact
    compact JSON text when the stored raw can be that text, else None (encode the object).
    """

    __slots__ = ("_missing", "_object", "_prepare", "_raw", "keep", "kind", "name", "namespace", "resource_version",
                 "text", "uid", "where")

    def __init__(self, kind: str, name: str, namespace: str, uid: str, resource_version: str) -> None:
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.uid = uid
        self.resource_version = resource_version
        self.text: str | None = None
        self._raw: msgspec.Raw | bytes | None = None
        self._object: dict[str, Any] | None = None
        self._prepare: Prepare | None = None
        self._missing: dict[str, str] = {}
        self.where = ""  # where the item was read (a file and item), for problems found later
        # A test of the undecoded text (``kinds.KindSpec.keep``) the reader leaves to the sync:
        # an item whose resourceVersion is stored was kept before, so only changed ones pay it.
        self.keep: Callable[..., bool] | None = None

    @classmethod
    def of(cls, obj: dict[str, Any], text: str | None = None, *, prepare: Prepare | None = None,
           namespace: str = "") -> ReadItem:
        """An item for an object already decoded (YAML files, tests); ``text`` its exact JSON.
        ``namespace``: identity of an object without one (``prepare`` must set the same)."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        kind, name = str(obj.get("kind")), str(meta.get("name"))
        ns = str(meta.get("namespace") or "") or namespace
        uid = meta.get("uid") if isinstance(meta.get("uid"), str) else ""
        item = cls(kind, name, ns, identity(kind, ns, name, uid), str(meta.get("resourceVersion") or ""))
        item._object, item.text, item._prepare = obj, text, prepare
        return item

    @classmethod
    def lazy(cls, raw: msgspec.Raw | bytes, *, kind: str = "", api_version: str = "",
             namespace: str = "", prepare: Prepare | None = None, where: str = "") -> ReadItem:
        """An item for the undecoded JSON ``raw``. ``kind``/``api_version``: put in when the
        text has none (API list items carry neither); ``namespace`` as for ``of``; ``where``
        starts the message of a problem found when it is decoded (``file.json item 3``).
        Raises ``jsonlist.JSONError`` when ``raw`` is not JSON (``LimitError`` when it is over
        the size or depth bound, checked here only for an item decoded at once)."""
        h = jsonlist.head(raw)
        if h is None:  # fields of unexpected types: decode it all now and let validation speak
            obj = jsonlist.decode_bounded(raw, where)
            if not isinstance(obj, dict):
                raise jsonlist.JSONError(f"item is a {type(obj).__name__}, not a Kubernetes object")
            for key, value in (("kind", kind), ("apiVersion", api_version)):
                if value:
                    obj.setdefault(key, value)
            return cls.of(obj, prepare=prepare, namespace=namespace)
        k = h.kind or kind
        ns = h.namespace or namespace
        item = cls(k, h.name, ns, identity(k, ns, h.name, h.uid), h.resource_version)
        item._raw, item._prepare, item.where = raw, prepare, where
        item._missing = {
            key: value for key, value, have in (("kind", kind, h.kind), ("apiVersion", api_version, h.api_version))
            if value and not have
        }  # fmt: skip
        return item

    def raw_bytes(self) -> bytes:
        """The item's JSON text as read (undecoded), or its object encoded compactly when it
        was read decoded (YAML): what byte tests such as ``kinds.wanted_pod`` look at."""
        if self._raw is not None:
            return bytes(self._raw)
        return msgspec.json.encode(self._object)

    @property
    def decoded(self) -> bool:
        """Was the object decoded already (``of``, or ``lazy`` text whose identity fields had
        unexpected types)?"""
        return self._raw is None

    def prepare_with(self, prepare: Prepare, default_namespace: str = "") -> None:
        """Run ``prepare`` on the object when it is decoded; an item without a namespace takes
        ``default_namespace`` in its identity (``prepare`` must set the same in the object)."""
        self._prepare = prepare
        if default_namespace and not self.namespace:
            stand_in = self.uid == identity(self.kind, "", self.name, "")
            self.namespace = default_namespace
            if stand_in:
                self.uid = identity(self.kind, default_namespace, self.name, "")

    def object(self) -> dict[str, Any]:
        """The decoded, prepared object (decoded once). Raises ``jsonlist.JSONError`` when the
        text is not a JSON object, ``jsonlist.LimitError`` when it is over the size or depth
        bound (``jsonlist.decode_bounded``), and whatever ``prepare`` raises
        (``UnknownAPIVersion``)."""
        if self._raw is not None:
            raw, self._raw = self._raw, None
            data = bytes(raw)
            obj = jsonlist.decode_bounded(data, self.where)
            if not isinstance(obj, dict):
                raise jsonlist.JSONError(f"item is a {type(obj).__name__}, not a Kubernetes object")
            text = None if b"\n" in data or not obj else data.decode("utf-8")
            if self._missing:
                obj.update(self._missing)
                if text is not None:
                    # Put the restored fields in the text too, as the first keys.
                    text = "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in self._missing.items()) + "," + text[1:]
            self._object, self.text = obj, text
        assert self._object is not None
        if self._prepare is not None:
            prepare, self._prepare = self._prepare, None
            prepared = prepare(self._object)
            if prepared is not self._object:
                self._object, self.text = prepared, None
        return self._object


# (kind, namespace, name, identity, resourceVersion) of one item, read from its text.
Ident = tuple[str, str, str, str, str]
RUN_ITEMS = 512  # items per run: the sync meets a List's items in runs this long, as read
NOT_SET_UP = (None, None, "")  # ``ItemRun.setup`` of a kind the source did not set up


def plain_ident(raw: msgspec.Raw | bytes, api_version: str = "") -> Ident | None:
    """The identity of an item whose kind, name and apiVersion (where its List names one for
    items without, ``api_version``) read cleanly from its own text; None for any other (odd
    field types, no kind or name, a nested List, fields its List would fill in), which
    ``ReadItem.lazy`` then decides."""
    h = jsonlist.plain_head(raw)
    if h is None:
        return None
    kind, version, name, ns, uid, rv = h
    if not kind or not name or kind.endswith("List") or (api_version and not version):
        return None
    return (kind, ns, name, uid or identity(kind, ns, name, ""), rv)


class ItemRun:
    """Consecutive items of one JSON List whose identity read cleanly (``plain_ident``).

    A re-sync of a large cluster mostly meets objects stored at the same resourceVersion (or
    pods skipped at it before): for those the sync needs only ``ids[i]``, never a ``ReadItem``
    (5,000 nodes: 205,000 items, each a few object layers). ``item(i)`` makes the one the
    item-by-item path would have made. ``ids[i]`` is None for an item the source dropped (a
    duplicate, a kind the product does not keep). ``setup``: kind -> (``ReadItem.keep``,
    prepare, default namespace) that the source gives items of that kind (``prepare_with``).
    """

    __slots__ = ("ids", "raws", "setup", "start", "where")

    def __init__(self, where: str, start: int) -> None:
        self.where, self.start = where, start
        self.raws: list[msgspec.Raw] = []
        self.ids: list[Ident | None] = []
        self.setup: dict[str, tuple[Callable[..., bool] | None, Prepare | None, str]] = {}

    def item(self, i: int) -> ReadItem:
        """Item ``i`` as ``ReadItem.lazy`` and the source's set-up make it (its text holds
        every identity field: nothing to fill in from its List)."""
        kind, ns, name, uid, rv = self.ids[i]  # type: ignore[misc]
        item = ReadItem(kind, name, ns, uid, rv)
        item._raw, item.where = self.raws[i], f"{self.where} item {self.start + i}"
        keep, prepare, default_namespace = self.setup.get(kind, NOT_SET_UP)
        item.keep = keep
        if prepare is not None:
            item.prepare_with(prepare, default_namespace)
        return item

    def items(self) -> Iterator[ReadItem]:
        """The items the source did not drop, in order."""
        for i, ident in enumerate(self.ids):
            if ident is not None:
                yield self.item(i)
