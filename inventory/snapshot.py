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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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


def _unroll(doc: Any, where: str, out: SnapshotLoad) -> None:
    if doc is None:
        return
    if not isinstance(doc, dict):
        out.errors.append(f"{where}: document is a {type(doc).__name__}, not a Kubernetes object")
        return
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            _unroll(item, f"{where} item {i}", out)
        return
    if not isinstance(kind, str) or not isinstance(doc.get("metadata"), dict):
        out.errors.append(f"{where}: not a Kubernetes object (no kind or metadata)")
        return
    out.objects.append(doc)


def _load_file(path: Path, out: SnapshotLoad) -> None:
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
        try:
            _unroll(json.loads(text), path.name, out)
        except json.JSONDecodeError as exc:
            out.errors.append(f"{path.name}: invalid JSON at line {exc.lineno}: {exc.msg}")
        return
    try:
        for n, doc in enumerate(yaml.safe_load_all(text)):
            _unroll(doc, f"{path.name} document {n + 1}", out)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        out.errors.append(f"{path.name}: invalid YAML{pos}: {problem}")


def load_path(path: str | Path) -> SnapshotLoad:
    """Load every object file and scrape under ``path`` (a file or a folder, recursively).

    Raises ``SnapshotError`` when the path does not exist or holds no readable object or
    scrape at all; partial damage is reported in ``SnapshotLoad.errors`` instead.
    """
    root = Path(path)
    if not root.exists():
        raise SnapshotError(f"snapshot path does not exist: {root}")
    out = SnapshotLoad()
    if root.is_file():
        _load_file(root, out)
    else:
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.suffix in OBJECT_SUFFIXES + PROM_SUFFIXES:
                _load_file(p, out)
    if not out.objects and not out.prom:
        reason = "; ".join(out.errors[:3]) or "no .yaml, .yml, .json or .prom files"
        raise SnapshotError(f"no Kubernetes objects found in {root}: {reason}")
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
