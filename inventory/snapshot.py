"""Read Kubernetes objects from files as ``kubectl get ... -o yaml|json`` writes them.

Pure: no Django. A snapshot is a file or a folder of files holding multi-document YAML,
JSON, ``kind: List`` wrappers, any mix of kinds. Folders may also hold DCGM exporter
scrapes (``*.prom``, Prometheus text format), kept as text for the telemetry join, and recorded
DCGM history (``*.range.json``, Prometheus range-query answers, read by ``telemetry_range``).

Everything read here is untrusted text from a cluster or an incident bundle: nothing is
evaluated, YAML is loaded with the safe loader, and a malformed document is reported with
its file and position instead of aborting the whole load.

Bounds (each breach is one problem of its file, the other files load): a file over
``MAX_FILE_BYTES`` is not read; an object over ``jsonlist.MAX_OBJECT_BYTES`` of text or nested
deeper than ``jsonlist.MAX_DEPTH`` is refused; YAML aliases (``*name``) are refused, since
``kubectl`` never writes anchors and an alias is how a few hundred bytes expand into gigabytes
(libyaml itself stops at 1,000 levels of nesting). The same uid twice is a problem too
(the first copy is the one kept). A range file over ``telemetry_range.MAX_FILE_BYTES`` is not
read, and its series and points are bounded there.
"""

from __future__ import annotations

import codecs
import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from . import jsonlist, telemetry_range
from .kinds import KINDS
from .parse import identity
from .readitem import RUN_ITEMS, ItemRun, ReadItem, plain_ident

OBJECT_SUFFIXES = (".yaml", ".yml", ".json")
PROM_SUFFIXES = (".prom",)
# A 5,000-node cluster with 100,000 pods of full metadata and status is about 790 MB of JSON
# (the benchmark's fleet); a file over 1 GiB is refused unless CLAIMSCOPE_SNAPSHOT_MAX_BYTES
# allows it (the reader keeps the file's bytes in memory next to the database's batches).
MAX_FILE_BYTES = int(os.environ.get("CLAIMSCOPE_SNAPSHOT_MAX_BYTES") or 2**30)


class _AliasRefused(yaml.constructor.ConstructorError):
    pass


class _NoAliases:
    """Refuses aliases: an alias hands the constructor a node it has already built, so
    refusing exactly that refuses every alias (and every merge key, ``<<: *x``) without a
    walk of its own."""

    constructed_objects: dict[Any, Any]
    recursive_objects: dict[Any, Any]

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise _AliasRefused(
                None, None,
                "an alias (*name) reuses the node anchored here; aliases are refused "
                "(kubectl never writes them, and they can expand a few bytes into gigabytes)",
                node.start_mark,
            )  # fmt: skip
        return super().construct_object(node, deep)  # type: ignore[misc]


class _Loader(_NoAliases, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader on libyaml's parser when PyYAML has it (7x faster), without aliases."""


class _PyLoader(_NoAliases, yaml.SafeLoader):
    """The pure-Python safe loader without aliases: for a file libyaml rejects, read again so
    the documents before the problem are kept and the message is the one PyYAML gives (libyaml
    refuses some escapes, e.g. a lone surrogate, that the pure scanner reads, leaving the
    problem to the object that holds it)."""


class SnapshotError(ValueError):
    """The snapshot path cannot be read at all (missing, empty, nothing parseable)."""


@dataclass
class SnapshotLoad:
    """What a snapshot path holds.

    ``objects``: raw Kubernetes objects (dicts) in file order, ``List`` wrappers unrolled.
    ``prom``: file name -> text of each ``*.prom`` scrape.
    ``ranges``: file name -> DCGM series of each ``*.range.json`` file
    (``[(labels incl. __name__, [(unix_s, value), ...])]``, ``telemetry_range``).
    ``errors``: one message per malformed document (file and reason); loading goes on.
    ``files``: the files read, in order.
    ``first_seen``: (kind, uid) -> the file that held it first (duplicates are reported).
    ``listed``: the item kinds of typed Lists read (``ResourceClaimList`` -> ``ResourceClaim``),
    empty ones included: such a List says the kind was listed whole, even with no items.
    """

    objects: list[dict[str, Any]] = field(default_factory=list)
    prom: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, telemetry_range.Series] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    first_seen: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    listed: set[str] = field(default_factory=set)

    def kinds(self) -> Counter[str]:
        return Counter(str(o.get("kind")) for o in self.objects)


def kind_named_by(file_name: str) -> str | None:
    """The kind a snapshot file is named for, as ``kubectl get KIND -A -o yaml > KIND.yaml``
    names it: the whole name before its extension is the kind's plural, its name or
    ``plural.group`` (``resourceclaims.yaml``, ``ResourceClaim.json``,
    ``resourceclaims.resource.k8s.io.yaml``); None for any other name (``pods.old.yaml``,
    ``resourceclaims-backup.yaml``)."""
    stem = file_name.rsplit(".", 1)[0].lower()
    return next((k.kind for k in KINDS if stem in (k.plural, k.kind.lower(), f"{k.plural}.{k.group}")), None)


def _empty_untyped_list(doc: Any) -> bool:
    """kubectl's ``kind: List`` with no items (``items: []``, ``null`` or none), as ``_unroll``
    reads a List (one whose metadata has a name is an object of kind List)."""
    if not isinstance(doc, dict) or doc.get("kind") != "List":
        return False
    items, meta = doc.get("items"), doc.get("metadata")
    return items == [] or (items is None and (meta is None or (isinstance(meta, dict) and not meta.get("name"))))


def _unroll(doc: Any, where: str, out: SnapshotLoad, checked: bool = True,
            sizes: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """The objects of one decoded document (``List`` items one by one). ``checked``: the
    document's depth is known to be within bounds (JSON checked on its text); else each object
    is checked here (YAML). ``sizes``: the text length of each List item, when known."""
    if doc is None:
        return
    if not isinstance(doc, dict):
        out.errors.append(f"{where}: document is a {type(doc).__name__}, not a Kubernetes object")
        return
    kind = doc.get("kind")
    meta = doc.get("metadata")
    items = doc.get("items")
    # A List with ``items: null`` or none is read as empty, as Kubernetes does; a List's
    # metadata has no name, an object of a kind that merely ends in "List" has one.
    empty = items is None and (meta is None or (isinstance(meta, dict) and not meta.get("name")))
    if isinstance(kind, str) and kind.endswith("List") and (empty or isinstance(items, list)):
        if kind != "List":
            out.listed.add(kind[: -len("List")])
        for i, item in enumerate(items or ()):
            size = sizes[i] if sizes is not None and i < len(sizes) else 0
            if size > jsonlist.MAX_OBJECT_BYTES:
                out.errors.append(f"{where} item {i}: {jsonlist.too_big(size, jsonlist.MAX_OBJECT_BYTES)}")
                continue
            yield from _unroll(item, f"{where} item {i}", out, checked)
        return
    if not isinstance(kind, str) or not isinstance(doc.get("metadata"), dict):
        out.errors.append(f"{where}: not a Kubernetes object (no kind or metadata)")
        return
    if not checked and jsonlist.nested_deeper(doc):
        out.errors.append(f"{where}: nested too deeply (more than {jsonlist.MAX_DEPTH} levels)")
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


def _json_items(data: bytes, name: str, out: SnapshotLoad) -> Iterator[ReadItem | ItemRun]:
    """Objects of one JSON file; a List's items stay undecoded until the sync asks, those
    whose identity reads cleanly in runs (``ItemRun``)."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]  # editors on Windows write one; JSON has none
    try:
        doc = jsonlist.split_list(data)
    except jsonlist.JSONError as exc:
        out.errors.append(_json_error(data, name, exc))
        return
    if doc is None:  # a single object (or not an object at all)
        try:
            single = jsonlist.decode_bounded(data, name)
        except jsonlist.JSONError as exc:
            out.errors.append(str(exc) if str(exc).startswith(name) else f"{name}: invalid JSON: {exc}")
            return
        if _empty_untyped_list(single) and (named := kind_named_by(name)):
            out.listed.add(named)  # kubectl's empty untyped List, in a file named for its kind
        for obj in _unroll(single, name, out):
            yield ReadItem.of(obj)
        return
    # ``kubectl get --raw`` and API responses give items without kind/apiVersion: a typed List
    # (``ResourceSliceList``) names them.
    item_kind = doc.kind[: -len("List")] if doc.kind.endswith("List") and doc.kind != "List" else ""
    item_version = doc.api_version if item_kind else ""
    if item_kind:
        out.listed.add(item_kind)
    elif doc.kind == "List" and not doc.items and (named := kind_named_by(name)):
        out.listed.add(named)  # kubectl's empty untyped List, in a file named for its kind
    run: ItemRun | None = None
    for i, raw in enumerate(doc.items):
        ident = plain_ident(raw, item_version)
        if ident is not None:
            if run is None:
                run = ItemRun(name, i)
            run.raws.append(raw)
            run.ids.append(ident)
            if len(run.ids) >= RUN_ITEMS:
                yield run
                run = None
            continue
        if run is not None:
            yield run
            run = None
        where = f"{name} item {i}"
        try:
            item = ReadItem.lazy(raw, kind=item_kind, api_version=item_version, where=where)
        except jsonlist.LimitError as exc:
            out.errors.append(str(exc))
            continue
        except jsonlist.JSONError as exc:
            out.errors.append(f"{where}: {exc}")
            continue
        if item.kind.endswith("List") or not item.name or item.kind == "" or item.decoded:
            # A nested List, no kind/name to tell, or identity fields of odd types: decode it
            # and look.
            try:
                obj = item.object()
            except jsonlist.LimitError as exc:
                out.errors.append(str(exc))
                continue
            except jsonlist.JSONError as exc:
                out.errors.append(f"{where}: {exc}")
                continue
            yield from (ReadItem.of(o) for o in _unroll(obj, where, out))
            continue
        yield item
    if run is not None:
        yield run


def _yaml_sizes(node: yaml.Node) -> list[int] | None:
    """The text length of each item of a ``List`` document's ``items`` (from the parser's
    marks: no walk), or None for any other document."""
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "items" and isinstance(value, yaml.SequenceNode):
            return [c.end_mark.index - c.start_mark.index for c in value.value]
    return None


def _yaml_items(text: str, name: str, out: SnapshotLoad) -> Iterator[ReadItem]:
    """Objects of one YAML file, document by document; a broken document ends the file (the
    parser cannot resynchronise), the documents before it are kept."""
    done = 0  # documents handled, so a second reading skips them
    lone_empty_list = False  # the first document is an empty untyped List (see the end)
    for loader_class in (_Loader, _PyLoader):
        loader = None
        n = 0
        try:
            loader = loader_class(text)  # the pure reader checks every character here
            while loader.check_node():
                node = loader.get_node()
                n += 1
                if n <= done:
                    continue
                done = n
                where = f"{name} document {n}"
                size = node.end_mark.index - node.start_mark.index
                sizes = _yaml_sizes(node)
                if sizes is None and size > jsonlist.MAX_OBJECT_BYTES:
                    out.errors.append(f"{where}: {jsonlist.too_big(size, jsonlist.MAX_OBJECT_BYTES)}")
                    continue
                doc = loader.construct_document(node)
                if n == 1:
                    lone_empty_list = _empty_untyped_list(doc)
                for obj in _unroll(doc, where, out, checked=False, sizes=sizes):
                    yield ReadItem.of(obj)
            if n == 1 and lone_empty_list and (named := kind_named_by(name)):
                out.listed.add(named)  # kubectl's empty untyped List, alone in a file named for its kind
            return
        except RecursionError:
            out.errors.append(f"{name}: invalid YAML: nested too deeply")
            return
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = str(getattr(exc, "problem", None) or str(exc).splitlines()[0])
            deep = "maximum nesting depth" in problem
            if loader_class is _Loader and not deep and not isinstance(exc, _AliasRefused):
                continue  # read it again with the pure loader, from the document that failed
            pos = f" at line {mark.line + 1}" if mark is not None else ""
            out.errors.append(f"{name}: invalid YAML{pos}: {'nested too deeply' if deep else problem}")
            return
        finally:
            if loader is not None:
                loader.dispose()


def _file_items(path: Path, out: SnapshotLoad) -> Iterator[ReadItem | ItemRun]:
    out.files.append(str(path))
    try:
        size = path.stat().st_size
        if telemetry_range.is_range_file(path.name) and size > telemetry_range.MAX_FILE_BYTES:
            out.errors.append(f"{path.name}: range file is {size:,} bytes, over the "
                              f"{telemetry_range.MAX_FILE_BYTES:,}-byte limit; not read")
            return
        if size > MAX_FILE_BYTES:
            out.errors.append(f"{path.name}: file is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit; not read")
            return
        data = path.read_bytes()
    except OSError as exc:
        out.errors.append(f"{path.name}: cannot read ({exc})")
        return
    if not data.strip():
        out.errors.append(f"{path.name}: file is empty")
        return
    if telemetry_range.is_range_file(path.name):
        recorded = telemetry_range.parse_range_result(data, path.name)
        out.errors.extend(recorded.problems)
        if recorded.series or not recorded.problems:
            out.ranges[path.name] = recorded.series
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
    yield from _yaml_items(text, path.name, out)


def snapshot_files(path: str | Path, problems: list[str] | None = None) -> list[Path]:
    """The object files and scrapes under ``path`` (a file, or a folder read recursively in
    name order). A link to a file outside the folder is not read (what a snapshot holds is
    what is in it); each such link is a problem in ``problems``. Raises ``SnapshotError`` when
    the path does not exist."""
    root = Path(path)
    if not root.exists():
        hint = "" if root.is_absolute() else f" (a relative path, read from {Path.cwd()}: give the cluster an absolute one)"
        raise SnapshotError(f"snapshot path does not exist: {root}{hint}")
    if root.is_file():
        return [root]
    inside = root.resolve()
    files = []
    for p in sorted(root.rglob("*")):
        if not (p.is_file() and p.suffix in OBJECT_SUFFIXES + PROM_SUFFIXES):
            continue
        if p.is_symlink() and not p.resolve().is_relative_to(inside):
            if problems is not None:
                problems.append(f"{p.relative_to(root)}: a link to a file outside the snapshot folder; not read")
            continue
        files.append(p)
    return files


def scrapes_at(path: str | Path) -> tuple[dict[str, str], list[str]]:
    """The DCGM exporter scrapes (``*.prom``: file name -> text) under a snapshot ``path``, and
    a problem per scrape that cannot be read; the objects are not read. What a diagnosis of
    a stored snapshot cluster needs besides its stored objects: scrapes are not stored."""
    out = SnapshotLoad()
    try:
        files = snapshot_files(path)
    except SnapshotError as exc:
        return {}, [str(exc)]
    for p in files:
        if p.suffix in PROM_SUFFIXES:
            list(_file_items(p, out))  # the sync's own read of a scrape: same bounds, same problems
    return out.prom, out.errors


def _again(file: str, kind: str, namespace: str, name: str, uid: str, first: str) -> str:
    ns = f"{namespace}/" if namespace else ""
    shown = "" if uid == identity(kind, namespace, name, "") else f" (uid {uid})"
    return f"{file}: {kind} {ns}{name}{shown} appears again (first in {first}); the first copy is kept"


def iter_snapshot(path: str | Path, out: SnapshotLoad) -> Iterator[ReadItem | ItemRun]:
    """Yield a ``ReadItem`` for every object under ``path``, one file at a time, or an
    ``ItemRun`` of consecutive items of a JSON List whose identity read cleanly.

    Items of a JSON List are decoded only when asked (``ReadItem.object()``) and keep their
    exact text. An object dropped from a run is None in its ``ids``. Scrapes, file names and
    problems go to ``out`` as the walk passes them; ``out.objects`` is left alone, so memory
    holds one file's bytes plus what the caller keeps. An object whose (kind, uid) came
    before is a problem and is not yielded again.
    Raises ``SnapshotError`` when the path does not exist, or (once the walk ends)
    when it held no readable object, scrape, range file or typed List (even an empty one) at all.
    """
    root = Path(path)
    found = False
    seen = out.first_seen
    for p in snapshot_files(root, out.errors):
        name = p.name
        for item in _file_items(p, out):
            found = True
            if isinstance(item, ItemRun):
                ids = item.ids
                for i, (kind, ns, obj_name, uid, _) in enumerate(ids):  # type: ignore[misc]
                    first = seen.get((kind, uid))
                    if first is not None:
                        out.errors.append(_again(name, kind, ns, obj_name, uid, first))
                        ids[i] = None
                    else:
                        seen[(kind, uid)] = name
                yield item
                continue
            key = (item.kind, item.uid)
            first = seen.get(key)
            if first is not None:
                out.errors.append(_again(name, item.kind, item.namespace, item.name, item.uid, first))
                continue
            seen[key] = name
            yield item
    if not found and not out.prom and not out.ranges and not out.listed:
        names = ", ".join(Path(f).name for f in out.files[:3]) + (" ..." if len(out.files) > 3 else "")
        reason = "; ".join(out.errors[:3]) or (f"{names} {'holds' if len(out.files) == 1 else 'hold'} no object" if out.files else
                                               "no .yaml, .yml, .json or .prom files")
        raise SnapshotError(f"no Kubernetes objects found in {root}: {reason}")


def load_path(path: str | Path) -> SnapshotLoad:
    """Load every object file and scrape under ``path`` (a file or a folder, recursively).

    Raises ``SnapshotError`` when the path does not exist or holds no readable object or
    scrape at all; partial damage is reported in ``SnapshotLoad.errors`` instead.
    """
    out = SnapshotLoad()
    for entry in iter_snapshot(path, out):
        for item in entry.items() if isinstance(entry, ItemRun) else (entry,):
            try:
                out.objects.append(item.object())
            except jsonlist.JSONError as exc:
                out.errors.append(f"{item.kind} {item.namespace}/{item.name}: {exc}")
    return out


# The fields the API server (or a kubelet, a controller) sets to a moment, and the maps and
# lists that hold them: a snapshot's clock comes from these alone. Annotations, labels, a
# device's attributes, a claim's opaque parameters are free text a user or a driver writes
# ("9999-12-31T23:59:59Z", or a key named ``lastUpdateTime``): they must not move "now", so
# the walk never enters them. ``managedFields[].time`` is left out as well (often stripped
# from snapshots, and not a moment of the objects' state).
TIME_FIELDS = frozenset({
    "creationTimestamp", "deletionTimestamp", "firstTimestamp", "lastTimestamp", "eventTime",
    "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "lastObservedTime",
    "lastTransitionTime", "lastHeartbeatTime", "lastProbeTime", "lastUpdateTime",
    "startTime", "startedAt", "finishedAt", "completionTime", "allocationTimestamp", "timeAdded",
    "lastScheduleTime", "renewTime", "acquireTime",
})  # fmt: skip
_TIME_HOLDERS = frozenset({
    "metadata", "spec", "status", "series", "deprecatedSeries", "conditions", "containerStatuses",
    "initContainerStatuses", "ephemeralContainerStatuses", "state", "lastState", "running",
    "terminated", "waiting", "allocation", "devices", "taints", "taint",
})  # fmt: skip


_SKEW = 3600.0  # seconds a cluster's clock may run ahead of this machine's
_latest_at = [-1.0, ""]  # (monotonic second it was made, the text): one clock read a second


def _latest() -> str:
    """The latest moment a snapshot read now can hold, as ``YYYY-MM-DDTHH:MM:SS`` (UTC)."""
    t = time.monotonic()
    if t - _latest_at[0] >= 1.0:
        _latest_at[0] = t
        _latest_at[1] = latest_credible().strftime("%Y-%m-%dT%H:%M:%S")
    return _latest_at[1]


def latest_credible() -> datetime:
    """The latest time a cluster's object can truly hold now: this machine's clock plus the
    skew a cluster's clock may have. A later timestamp (hand-edited, ``9999-12-31``) says
    nothing about when anything happened."""
    return datetime.now(UTC) + timedelta(seconds=_SKEW)


def _is_time(v: Any) -> bool:
    return type(v) is str and len(v) >= 20 and v[4] == "-" and v[10] == "T" and v[-1] == "Z"


def newest_timestamp(objects: Iterable[Any], newest: str | None = None) -> str | None:
    """The later of ``newest`` and the latest RFC 3339 ``YYYY-MM-DDTHH:MM:SS...Z`` value of a
    time field (``TIME_FIELDS``) in the objects (the snapshot's moment), returned as found;
    only the maps and lists that hold such fields (``_TIME_HOLDERS``) are walked. A time after
    the moment of the walk (``_latest``: the clock plus an hour of skew) is not when the
    snapshot was taken: one hand-edited or skewed object would move the clock of every
    diagnosis, age and chargeback window of its cluster, so it is passed over."""
    stack: list[Any] = [o for o in objects if isinstance(o, dict)]
    latest = _latest()
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if k in TIME_FIELDS:
                    # Compared on the second-resolution prefix; fractional parts sort fine too.
                    if _is_time(x) and (newest is None or x[:19] > newest[:19]) and x[:19] <= latest:
                        newest = x
                elif k in _TIME_HOLDERS and isinstance(x, (dict, list)):
                    stack.append(x)
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, (dict, list)))
    return newest
