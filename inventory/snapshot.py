"""Read Kubernetes objects from files as ``kubectl get ... -o yaml|json`` writes them.

Pure: no Django. A snapshot is a file or a folder of files holding multi-document YAML,
JSON, ``kind: List`` wrappers, any mix of kinds. Folders may also hold DCGM exporter
scrapes (``*.prom``, Prometheus text format), kept as text for the telemetry join.

Everything read here is untrusted text from a cluster or an incident bundle: nothing is
evaluated, YAML is loaded with the safe loader, and a malformed document is reported with
its file and position instead of aborting the whole load.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import jsonlist

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


def _json_items(text: str, name: str, out: SnapshotLoad) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Objects of one JSON file, a List walked item by item (see ``jsonlist``)."""
    head = jsonlist.ListHead()
    try:
        for i, (item, item_text) in enumerate(jsonlist.iter_items(text, head)):
            # Compact item text is stored as the raw object as is; indented text is re-encoded.
            raw = item_text if "\n" not in item_text else None
            for obj in _unroll(item, f"{name} item {i}", out):
                yield obj, (raw if obj is item else None)
        return
    except jsonlist.NotAList:
        pass
    except json.JSONDecodeError as exc:
        out.errors.append(f"{name}: invalid JSON at line {exc.lineno}: {exc.msg}")
        return
    # Not a List: with no "items" the walk decoded the whole object into the head.
    doc = head.fields if head.complete else None
    if doc is None:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            out.errors.append(f"{name}: invalid JSON at line {exc.lineno}: {exc.msg}")
            return
    for obj in _unroll(doc, name, out):
        yield obj, None


def _file_items(path: Path, out: SnapshotLoad) -> Iterator[tuple[dict[str, Any], str | None]]:
    out.files.append(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.errors.append(f"{path.name}: cannot read ({exc})")
        return
    if not text.strip():
        out.errors.append(f"{path.name}: file is empty")
        return
    if path.suffix in PROM_SUFFIXES:
        out.prom[path.name] = text
        return
    if path.suffix == ".json":
        yield from _json_items(text, path.name, out)
        return
    try:
        for n, doc in enumerate(yaml.safe_load_all(text)):
            for obj in _unroll(doc, f"{path.name} document {n + 1}", out):
                yield obj, None
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


def iter_snapshot(path: str | Path, out: SnapshotLoad) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Yield ``(object, raw_text)`` for every object under ``path``, one file at a time.

    ``raw_text`` is the object's own compact JSON text when the file held it so (a JSON
    List written without indentation), else None. Scrapes, file names and problems go to
    ``out`` as the walk passes them; ``out.objects`` is left alone, so memory holds one file's
    text plus the objects the caller keeps. Raises ``SnapshotError`` when the path does not
    exist, or (once the walk ends) when it held no readable object or scrape at all.
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
    out.objects = [obj for obj, _ in iter_snapshot(path, out)]
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
