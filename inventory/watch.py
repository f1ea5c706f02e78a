"""Delta reads of a live cluster: per list, a watch from the stored resourceVersion.

Pure apart from I/O: no Django; times are passed in (``now``, a timezone-aware datetime) or
read from ``time.monotonic`` for deadlines. ``WatchSource.read() -> ReadResult`` is a
``sources.Source``, so the sync does not know it reads deltas.

Each list a kind is read as (``KindSpec.targets``: one per namespace and field selector) has a
``Cursor``: the resourceVersion the last good sync reached and when it last listed in full.

- With a cursor: a watch from it (``allowWatchBookmarks``, ``timeoutSeconds``). ADDED and
  MODIFIED events become the read's items, DELETED ones ``ReadResult.deleted`` (kind -> uids);
  events of one object collapse to its last. BOOKMARK events only advance the cursor (the
  API server sends one about 2 s before ``timeoutSeconds`` ends, so a quiet list's cursor
  stays fresh). The kind is not "complete": the reconcile deletes nothing it did not see
  deleted.
- With none, on 410 Gone (an HTTP 410 or an ERROR event carrying a Status with code 410, as
  kube-apiserver sends for an expired resourceVersion), or when ``relist_seconds`` have passed
  since the last full list: a paged list (``limit``/``continue``; a 410 on a continue token
  lists again from the start), streamed into the sync as ``LiveSource`` does; every list of
  the kind is read in full, so the kind is complete and vanished objects are deleted.

``ReadResult.cursors`` (key -> ``CursorUpdate``) says where each list got to; the caller
stores them with the data (``inventory.runs``) under the rule of ``CursorUpdate``.

Polls (Celery) run every watch for ``watch_seconds`` at once in threads, then stream the
lists; ``keep_open=True`` (``manage.py watch_clusters``) keeps the watch threads running
between reads, so each ``read()`` drains what arrived since the last one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec

from . import jsonlist
from .kinds import KINDS, KindSpec
from .kubehttp import KubeAPIError, KubeHTTP, KubeHTTPError
from .normalize import normalize
from .readitem import ReadItem
from .sources import ReadResult, SourceError

GRACE = 3.0  # seconds a watch may run past its timeoutSeconds before the client ends it


@dataclass(frozen=True)
class Cursor:
    """What is stored per list (``WatchCursor``): ``resource_version`` ("" = list first, or,
    with ``listed_at``, an optional kind not served then) and ``listed_at`` (the last full
    list, None = never)."""

    resource_version: str = ""
    listed_at: datetime | None = None


@dataclass(frozen=True)
class CursorUpdate:
    """Where one list got to in a read.

    ``resource_version``: the new cursor; ``listed``: it was listed in full (``listed_at`` =
    the read's ``now``); ``clean``: read without error to its end; ``quiet``: it brought no
    object and no deletion. Store it when ``clean`` and either the sync applied the read
    without any problem or the update is ``quiet`` (moving a cursor past objects a partial
    sync did not apply, or deletions it did not make, would lose them until the next relist)."""

    resource_version: str
    listed: bool
    clean: bool
    quiet: bool


class _Event(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"")


class _Status(msgspec.Struct):
    kind: str = ""
    code: int = 0
    reason: str = ""
    message: str = ""


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    # ``continue`` is a Python keyword: renamed.
    continue_: str = msgspec.field(default="", name="continue")


class _Page(msgspec.Struct):
    items: list[msgspec.Raw] | None = None
    metadata: _ListMeta | None = None


_EVENT = msgspec.json.Decoder(_Event)
_STATUS = msgspec.json.Decoder(_Status)
_PAGE = msgspec.json.Decoder(_Page)


class _Gone(Exception):
    """The stored resourceVersion is too old (410): list again."""


class _Target:
    """One list: its spec, cursor, and (while watched) the events not yet drained."""

    def __init__(self, spec: KindSpec, key: str, ns: str | None, params: tuple[tuple[str, str], ...], cursor: Cursor) -> None:
        self.spec, self.key, self.ns, self.params = spec, key, ns, params
        self.rv = cursor.resource_version
        self.listed_at = cursor.listed_at
        self.version: str | None = None  # the served version found by the last list/watch
        self.lock = threading.Lock()
        self.buffer: dict[str, tuple[bool, ReadItem]] = {}  # uid -> (deleted?, last item)
        self.skipped = 0
        self.errors: list[str] = []
        self.gone = False
        # An optional kind the server did not serve at ``listed_at`` (its CRD not installed):
        # stored as a cursor without a resourceVersion, asked again at the next relist.
        self.absent = not cursor.resource_version and cursor.listed_at is not None
        self.generation = 0  # bumped when a relist supersedes a running watch
        self.thread: threading.Thread | None = None

    def api_version(self, version: str) -> str:
        return f"{self.spec.group}/{version}" if self.spec.group else version


class WatchSource:
    """A live cluster read as deltas. ``http``: a ``KubeHTTP``; ``cursors``: key -> ``Cursor``
    as stored; ``now``: the read's time (for ``relist_seconds`` and ``listed_at``);
    ``watch_seconds``: how long a poll's watches run; ``deadline_seconds``: the whole read's
    bound (every request ends by then; what is left unread is an error, the run partial)."""

    def __init__(self, http: KubeHTTP, *, description: str = "live", cursors: Mapping[str, Cursor] | None = None,
                 now: datetime, relist_seconds: float = 3600.0, watch_seconds: float = 5.0, page_size: int = 500,
                 deadline_seconds: float = 200.0, kinds: tuple[KindSpec, ...] = KINDS, keep_open: bool = False,
                 max_threads: int = 32) -> None:
        self.http = http
        self.description = description
        self.now = now
        self.relist_seconds = relist_seconds
        self.watch_seconds = watch_seconds
        self.page_size = page_size
        self.deadline_seconds = deadline_seconds
        self.keep_open = keep_open
        self.max_threads = max_threads
        self.stopped = threading.Event()
        self.deadline = time.monotonic() + deadline_seconds
        cursors = cursors or {}
        self.targets: list[_Target] = [
            _Target(spec, key, ns, params, cursors.get(key, Cursor())) for spec in kinds for key, ns, params in spec.targets()
        ]
        self._read_once = False
        self.last_read: ReadResult | None = None

    # -- what to do with each list -------------------------------------------------------
    def _relist_due(self, t: _Target) -> bool:
        if not t.rv or t.gone:
            return True
        if t.listed_at is None:
            return True
        return (self.now - t.listed_at).total_seconds() >= self.relist_seconds

    def _plan(self) -> tuple[list[_Target], list[_Target]]:
        """(lists to watch, lists to list). Any list of a kind due for a relist relists the
        whole kind, so the kind is complete and its vanished objects can be deleted. An
        optional kind found not served is asked again only at the next relist."""
        targets = [t for t in self.targets if not (t.absent and t.listed_at is not None and
                                                   (self.now - t.listed_at).total_seconds() < self.relist_seconds)]
        relist_kinds = {t.spec.kind for t in targets if self._relist_due(t)}
        watch = [t for t in targets if t.spec.kind not in relist_kinds]
        listing = [t for t in targets if t.spec.kind in relist_kinds]
        return watch, listing

    # -- reading ---------------------------------------------------------------------------
    def read(self) -> ReadResult:
        """Ask ``/version`` (a dead or refusing server fails here: ``SourceError``), run or
        drain the watches, and return a read whose lists stream while the sync consumes it."""
        self.now = self.now if not self._read_once else _utcnow()
        self._read_once = True
        self.deadline = time.monotonic() + self.deadline_seconds
        out = ReadResult()
        try:
            version = jsonlist.decode(self.http.get("/version", verb="get", deadline=self.deadline))
        except KubeHTTPError as exc:
            raise SourceError(f"API server refused or did not answer /version: {exc.message}") from exc
        except jsonlist.JSONError as exc:
            raise SourceError(f"GET /version: response is not JSON ({exc})") from exc
        out.server_version = str(version.get("gitVersion", "")) if isinstance(version, dict) else ""
        watch, listing = self._plan()
        self._run_watches(watch)
        # Watches that met 410 Gone: their whole kind is listed now.
        gone_kinds = {t.spec.kind for t in watch if t.gone}
        if gone_kinds:
            listing += [t for t in watch if t.spec.kind in gone_kinds]
            watch = [t for t in watch if t.spec.kind not in gone_kinds]
        out.delta_kinds = {t.spec.kind for t in watch}
        self.last_read = out
        out.stream = self._stream(watch, listing, out)
        return out

    def pending(self) -> bool:
        """keep_open: is there anything for a read to do (events arrived, a list due, an error)?"""
        self.now = _utcnow() if self._read_once else self.now
        watch, listing = self._plan()
        if listing:
            return True
        return any(t.buffer or t.errors or t.gone or t.thread is None or not t.thread.is_alive() for t in watch)

    def close(self) -> None:
        """Stop the watch threads (they end with their current watch window)."""
        self.stopped.set()
        for t in self.targets:
            t.generation += 1

    def _run_watches(self, watch: list[_Target]) -> None:
        if self.keep_open:
            for t in watch:
                if t.thread is None or not t.thread.is_alive():
                    self._start_thread(t)
            return
        if not watch:
            return
        with ThreadPoolExecutor(max_workers=max(1, min(self.max_threads, len(watch)))) as pool:
            list(pool.map(self._watch_target, watch))

    def _start_thread(self, t: _Target) -> None:
        gen = t.generation
        t.thread = threading.Thread(target=self._watch_forever, args=(t, gen), daemon=True, name=f"watch {t.key}")
        t.thread.start()

    def _watch_forever(self, t: _Target, gen: int) -> None:
        """keep_open: watch windows back to back from the last event, until a relist
        supersedes this thread, 410 Gone, or ``close``. Errors wait a backoff and resume."""
        failures = 0
        while not self.stopped.is_set() and t.generation == gen and not t.gone:
            before = len(t.errors)
            self._watch_target(t, gen, forever=True)
            if len(t.errors) > before:
                failures += 1
                self.stopped.wait(min(30.0, 0.5 * 2**failures))
            else:
                failures = 0

    def _watch_target(self, t: _Target, gen: int | None = None, forever: bool = False) -> None:
        """One watch window of one list; events go to ``t.buffer``, problems to ``t.errors``."""
        gen = t.generation if gen is None else gen
        seconds = self.watch_seconds if not forever else max(self.watch_seconds, 30.0)
        versions = [t.version] if t.version else list(t.spec.versions)
        for i, version in enumerate(versions):
            path = t.spec.path(version, t.ns)
            query: list[tuple[str, Any]] = [
                ("watch", "true"), ("resourceVersion", t.rv), ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", max(1, int(seconds))), *t.params,
            ]
            until = time.monotonic() + seconds + GRACE
            if not forever:
                until = min(until, self.deadline)
            try:
                for line in self.http.lines(path, query, verb="watch", deadline=until):
                    self._event(t, gen, version, line)
                t.version = version
                return
            except _Gone:
                t.gone = True
                return
            except KubeAPIError as exc:
                if exc.status == 404 and i + 1 < len(versions):
                    continue
                if exc.status in (404, 410):
                    # 410: the cursor is too old. 404: the version watched is no longer served
                    # (an upgrade, a CRD removed): a list finds what is served now.
                    t.gone, t.version = True, None
                    return
                with t.lock:
                    t.errors.append(f"watch {t.key} ({version}): {exc.message}")
                return
            except KubeHTTPError as exc:
                with t.lock:
                    t.errors.append(f"watch {t.key} ({version}): {exc.message}")
                return
            except jsonlist.JSONError as exc:
                with t.lock:
                    t.errors.append(f"watch {t.key} ({version}): an event is not JSON ({exc})")
                return

    def _event(self, t: _Target, gen: int, version: str, line: bytes) -> None:
        """Apply one watch event line to ``t``. Raises ``_Gone`` and ``jsonlist.JSONError``."""
        try:
            ev = _EVENT.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise jsonlist.JSONError(str(exc)) from exc
        if not bytes(ev.object) or bytes(ev.object) == b"null":
            raise jsonlist.JSONError(f"a {ev.type or 'typeless'} event without an object")
        if ev.type == "ERROR":
            try:
                status = _STATUS.decode(ev.object)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise jsonlist.JSONError(f"an ERROR event's object is not a Status ({exc})") from exc
            if status.code == 410:
                raise _Gone(status.message)
            raise KubeAPIError("watch", t.key, status.code, status.reason, status.message)
        raw = bytes(ev.object)
        if ev.type == "BOOKMARK":
            h = jsonlist.head(raw)
            if h is not None and h.resource_version and t.generation == gen:
                with t.lock:
                    t.rv = h.resource_version
            return
        if ev.type not in ("ADDED", "MODIFIED", "DELETED"):
            raise jsonlist.JSONError(f"unknown watch event type {ev.type[:40]!r}")
        keep = t.spec.keep is None or t.spec.keep(raw)
        item = ReadItem.lazy(raw, kind=t.spec.kind, api_version=t.api_version(version), prepare=normalize) if keep else None
        rv = item.resource_version if item is not None else (getattr(jsonlist.head(raw), "resource_version", "") or "")
        with t.lock:
            if t.generation != gen:
                return
            if item is not None:
                t.buffer[item.uid] = (ev.type == "DELETED", item)
            else:
                t.skipped += 1
            if rv:
                t.rv = rv

    def _drain(self, t: _Target, out: ReadResult) -> Iterator[ReadItem]:
        with t.lock:
            buf, t.buffer = t.buffer, {}
            errors, t.errors = t.errors, []
            skipped, t.skipped = t.skipped, 0
            rv = t.rv
        kind = t.spec.kind
        if skipped:
            out.skipped[kind] = out.skipped.get(kind, 0) + skipped
        out.errors.extend(errors)
        deleted = out.deleted.setdefault(kind, set())
        for uid, (is_deleted, item) in buf.items():
            if is_deleted:
                deleted.add(uid)
            else:
                yield item
        out.cursors[t.key] = CursorUpdate(rv, listed=False, clean=not errors, quiet=not buf)

    def _stream(self, watch: list[_Target], listing: list[_Target], out: ReadResult) -> Iterator[ReadItem]:
        for t in watch:
            yield from self._drain(t, out)
        done: dict[str, bool] = {}
        for t in listing:
            ok = yield from self._list_target(t, out)
            done[t.spec.kind] = done.get(t.spec.kind, True) and ok
        out.complete_kinds.update(k for k, ok in done.items() if ok)
        out.payload_bytes = self.http.bytes_read
        if not any(out.deleted.values()):
            out.deleted = {}

    def _list_target(self, t: _Target, out: ReadResult):
        """Stream one list in full; returns whether it was read to its end."""
        spec = t.spec
        missing = 0
        for version in spec.versions:
            try:
                rv = yield from self._pages(t, version, out)
            except KubeAPIError as exc:
                if exc.status == 404:
                    missing += 1
                    continue
                out.errors.append(f"list {t.key} ({version}): {exc.message}")
                return False
            except (KubeHTTPError, SourceError) as exc:
                out.errors.append(f"list {t.key} ({version}): {getattr(exc, 'message', exc)}")
                return False
            t.version, t.gone, t.absent = version, False, False
            t.listed_at = self.now
            with t.lock:  # a watch still running from before the list is superseded
                t.rv, t.buffer, t.skipped = rv, {}, 0
                t.generation += 1
            out.cursors[t.key] = CursorUpdate(rv, listed=True, clean=True, quiet=False)
            if self.keep_open and not self.stopped.is_set():
                self._start_thread(t)
            return True
        if spec.optional:
            t.absent, t.listed_at = True, self.now
            out.cursors[t.key] = CursorUpdate("", listed=True, clean=True, quiet=True)
            return True  # not installed: an empty, complete list
        out.errors.append(f"list {t.key}: the server serves none of {', '.join(spec.versions)}")
        return False

    def _pages(self, t: _Target, version: str, out: ReadResult):
        """Yield the items of one list, page by page; returns the list's resourceVersion."""
        spec = t.spec
        path = spec.path(version, t.ns)
        api_version = t.api_version(version)
        token = ""
        relisted = False
        rv = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", self.page_size), *t.params]
            if token:
                query.append(("continue", token))
            try:
                body = self.http.get(path, query, verb="list", deadline=self.deadline)
            except KubeAPIError as exc:
                if exc.status == 410 and token and not relisted:
                    # The continue token expired: list again from the start (objects yielded
                    # twice are absorbed by the reconcile, which keys them by uid).
                    token, relisted = "", True
                    continue
                raise
            out.payload_bytes = self.http.bytes_read
            try:
                page = _PAGE.decode(body)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise SourceError(f"GET {path}: response is not a JSON list ({exc})") from exc
            if page.items is None:
                raise SourceError(f"GET {path}: no items in list response")
            meta = page.metadata or _ListMeta()
            if not token:
                rv = meta.resourceVersion
            for raw in page.items:
                if spec.keep is not None and not spec.keep(bytes(raw)):
                    out.skipped[spec.kind] = out.skipped.get(spec.kind, 0) + 1
                    continue
                try:
                    yield ReadItem.lazy(raw, kind=spec.kind, api_version=api_version, prepare=normalize)
                except jsonlist.JSONError as exc:
                    out.errors.append(f"list {t.key}: an item is not an object ({exc})")
            token = meta.continue_
            if not token:
                return rv


def _utcnow() -> datetime:

    return datetime.now(UTC)
