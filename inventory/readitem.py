"""One object as a source read it: who it is at once, the whole object only when needed.

Pure: no Django. A re-sync of a large cluster mostly meets objects it already stored at the
same ``resourceVersion``; a ``ReadItem`` carries the identity read cheaply from the item's
text (``jsonlist.head``) so the sync can skip those without ever decoding them, and decodes
the others on demand (``object()``), keeping their exact text to store as raw JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
