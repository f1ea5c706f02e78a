"""Read Kubernetes objects from files as ``kubectl get ... -o yaml|json`` writes them.

Pure: no Django. A snapshot is a file or a folder of files holding multi-document YAML,
JSON, ``kind: List`` wrappers, any mix of kinds. Folders may also hold DCGM exporter
scrapes (``*.prom``, Prometheus text format), kept as text for the telemetry join.

Everything read here is untrusted text from a cluster or an incident bundle: nothing is
evaluated, YAML is loaded with the safe loader, and a malformed document is reported with
its file and position instead of aborting the whole load.
"""

from __future__ import annotations

import codecs
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import jsonlist
from .readitem import ReadItem

OBJECT_SUFFIXES = (".yaml", ".yml", ".json")
PROM_SUFFIXES = (".prom",)


class SnapshotError(ValueError):
    """The snapshot path cannot be read at all (missing, empty, nothing parseable)."""


@dataclass
class SnapshotLoad:
    """What a snapshot path holds.

    ``objects``: raw Kubernetes objects (dicts) in file order, ``List`` wrappers unrolled.
    ``prom``: file name -> text of each ``*.prom`` scrape.
    ``errors``: one message per malformed document (file and reason); loading goes on.
    ``files``: the files read, in order.
    """

    objects: list[dict[str, Any]] = field(default_factory=list)
    prom: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def kinds(self) -> Counter[str]:
        return Counter(str(o.get("kind")) for o in self.objects)


def _unroll(doc: Any, where: str, out: SnapshotLoad) -> Iterator[dict[str, Any]]:
    if doc is None:
        return
    if not isinstance(doc, dict):
        out.errors.append(f"{where}: document is a {type(doc).__name__}, not a Kubernetes object")
        return
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            yield from _unroll(item, f"{where} item {i}", out)
        return
    if not isinstance(kind, str) or not isinstance(doc.get("metadata"), dict):
        out.errors.append(f"{where}: not a Kubernetes object (no kind or metadata)")
        return
    yield doc


def _json_error(data: bytes, name: str, found: Exception) -> str:
    """The standard library's message for invalid JSON, which names the line; ``found`` (the
    decoder's own) where the standard library accepts what JSON does not (NaN, Infinity)."""
    try:
        json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        return f"{name}: invalid JSON{where}: {getattr(exc, 'msg', exc)}"
    except RecursionError:
        pass
    return f"{name}: invalid JSON: {found}"


def _json_items(data: bytes, name: str, out: SnapshotLoad) -> Iterator[ReadItem]:
    """Objects of one JSON file; a List's items stay undecoded until the sync asks."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]  # editors on Windows write one; JSON has none
    try:
        doc = jsonlist.split_list(data)
    except jsonlist.JSONError as exc:
        out.errors.append(_json_error(data, name, exc))
        return
    if doc is None:  # a single object (or not an object at all)
        for obj in _unroll(jsonlist.decode(data), name, out):
            yield ReadItem.of(obj)
        return
    # ``kubectl get --raw`` and API responses give items without kind/apiVersion: a typed List
    # (``ResourceSliceList``) names them.
    item_kind = doc.kind[: -len("List")] if doc.kind.endswith("List") and doc.kind != "List" else ""
    item_version = doc.api_version if item_kind else ""
    for i, raw in enumerate(doc.items):
        where = f"{name} item {i}"
        try:
            item = ReadItem.lazy(raw, kind=item_kind, api_version=item_version)
        except jsonlist.JSONError as exc:
            out.errors.append(f"{where}: {exc}")
            continue
        if item.kind.endswith("List") or not item.name or item.kind == "":
            # A nested List, or no kind/name to tell: decode it and look.
            try:
                obj = item.object()
            except jsonlist.JSONError as exc:
                out.errors.append(f"{where}: {exc}")
                continue
            yield from (ReadItem.of(o) for o in _unroll(obj, where, out))
            continue
        yield item


def _file_items(path: Path, out: SnapshotLoad) -> Iterator[ReadItem]:
    out.files.append(str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.errors.append(f"{path.name}: cannot read ({exc})")
        return
    if not data.strip():
        out.errors.append(f"{path.name}: file is empty")
        return
    if path.suffix == ".json":
        yield from _json_items(data, path.name, out)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.errors.append(f"{path.name}: cannot read ({exc})")
        return
    if path.suffix in PROM_SUFFIXES:
        out.prom[path.name] = text
        return
    try:
        for n, doc in enumerate(yaml.safe_load_all(text)):
            for obj in _unroll(doc, f"{path.name} document {n + 1}", out):
                yield ReadItem.of(obj)
    except RecursionError:
        out.errors.append(f"{path.name}: invalid YAML: nested too deeply")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        out.errors.append(f"{path.name}: invalid YAML{pos}: {problem}")


def snapshot_files(path: str | Path) -> list[Path]:
    """The object files and scrapes under ``path`` (a file, or a folder read recursively in
    name order). Raises ``SnapshotError`` when the path does not exist."""
    root = Path(path)
    if not root.exists():
        raise SnapshotError(f"snapshot path does not exist: {root}")
    if root.is_file():
        return [root]
    return [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in OBJECT_SUFFIXES + PROM_SUFFIXES]


def iter_snapshot(path: str | Path, out: SnapshotLoad) -> Iterator[ReadItem]:
    """Yield a ``ReadItem`` for every object under ``path``, one file at a time.

    Items of a JSON List are decoded only when asked (``ReadItem.object()``) and keep their
    exact text. Scrapes, file names and problems go to ``out`` as the walk passes them;
    ``out.objects`` is left alone, so memory holds one file's bytes plus what the caller
    keeps. Raises ``SnapshotError`` when the path does not exist, or (once the walk ends)
    when it held no readable object or scrape at all.
    """
    root = Path(path)
    found = False
    for p in snapshot_files(root):
        for item in _file_items(p, out):
            found = True
            yield item
    if not found and not out.prom:
        reason = "; ".join(out.errors[:3]) or "no .yaml, .yml, .json or .prom files"
        raise SnapshotError(f"no Kubernetes objects found in {root}: {reason}")


def load_path(path: str | Path) -> SnapshotLoad:
    """Load every object file and scrape under ``path`` (a file or a folder, recursively).

    Raises ``SnapshotError`` when the path does not exist or holds no readable object or
    scrape at all; partial damage is reported in ``SnapshotLoad.errors`` instead.
    """
    out = SnapshotLoad()
    for item in iter_snapshot(path, out):
        try:
            out.objects.append(item.object())
        except jsonlist.JSONError as exc:
            out.errors.append(f"{item.kind} {item.namespace}/{item.name}: {exc}")
    return out


def newest_timestamp(objects: list[dict[str, Any]]) -> str | None:
    """The latest RFC 3339 timestamp anywhere in the objects (the snapshot's moment).

    Scans every string value that looks like ``YYYY-MM-DDTHH:MM:SS...Z``; returns it as found.
    """
    best: str | None = None
    stack: list[Any] = list(objects)
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and len(v) >= 20 and v[4] == "-" and v[10] == "T" and v.endswith("Z"):
            # Compare on the second-resolution prefix; fractional parts sort fine too.
            if best is None or v[:19] > best[:19]:
                best = v
    return best


_TIMESTAMP = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^"\\]*Z)"')


def newest_timestamp_in_text(text: str, newest: str | None = None) -> str | None:
    """``newest_timestamp`` over one object's JSON text (a regular expression, not a walk of
    the decoded object): the later of ``newest`` and every RFC 3339 ``...Z`` string in it."""
    for m in _TIMESTAMP.finditer(text):
        v = m.group(1)
        if newest is None or v[:19] > newest[:19]:
            newest = v
    return newest
