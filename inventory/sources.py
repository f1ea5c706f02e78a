"""Where cluster objects come from: a live API server or a snapshot on disk.

Both sources implement ``read() -> ReadResult``; the sync does not know which one it has.
Sources are chosen by name (``snapshot``, ``kubeconfig``, ``in_cluster``) through
``open_source``, as NetBox registers its data backends.

Pure apart from I/O: no Django. Every object returned is normalized to the v1 shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import jsonlist
from .kinds import BY_KIND, KINDS, KindSpec
from .kubehttp import KubeAPIError, KubeHTTP, KubeHTTPError, RetryPolicy
from .normalize import normalize
from .readitem import ItemRun, ReadItem
from .snapshot import SnapshotError, SnapshotLoad, iter_snapshot, snapshot_files


class SourceError(Exception):
    """The source cannot be read at all (bad path, unreachable API server, no credentials)."""


@dataclass
class ReadResult:
    """Objects read from a source.

    ``objects``: normalized raw objects of the kinds in ``kinds.KINDS``, read up front (small
    reads, tests); ``stream``: ``ReadItem``s produced lazily while the sync consumes them, so a
    large cluster is never held whole in memory and unchanged objects are never decoded.
    ``items()`` yields both as ``ReadItem``s.
    The fields below are filled in as the stream is read: final once ``items()`` is exhausted.
    ``complete_kinds``: kinds whose full list was read without error; the sync only ever
    deletes vanished objects of these kinds, and only when ``errors`` is empty.
    ``skipped``: kind -> count of objects of kinds this product does not keep.
    ``errors``: one message per failed page or malformed object.
    ``prom``: DCGM exporter scrapes (file name -> Prometheus text), snapshots only.
    ``delta_kinds``: kinds read as watch deltas (``inventory.watch``): only what changed, so
    never complete; ``deleted``: kind -> uids the API server reported deleted (the reconcile
    deletes these, after a read without errors); ``cursors``: list key ->
    ``watch.CursorUpdate``, where each list got to.
    ``ranges``: recorded DCGM history (``*.range.json`` file name -> series), snapshots only.
    """

    objects: list[dict[str, Any]] = field(default_factory=list)
    stream: Iterable[ReadItem | ItemRun] | None = None
    complete_kinds: set[str] = field(default_factory=set)
    skipped: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    prom: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, list[Any]] = field(default_factory=dict)
    delta_kinds: set[str] = field(default_factory=set)
    deleted: dict[str, set[str]] = field(default_factory=dict)
    cursors: dict[str, Any] = field(default_factory=dict)
    server_version: str = ""
    payload_bytes: int = 0
    # Set by the sync: did reconciling this read create, update or delete anything?
    changed: bool = True

    def items(self) -> Iterator[ReadItem | ItemRun]:
        """Every object once, alone or in a run of a JSON List's items (``ItemRun``: its
        ``items()`` are the objects); the stream can be consumed only once.

        Raises ``SourceError`` when the source fails while being read."""
        for obj in self.objects:
            yield ReadItem.of(obj)
        stream, self.stream = self.stream, None
        if stream is not None:
            yield from stream


class Source(Protocol):
    description: str

    def read(self) -> ReadResult: ...


def _size(path: Path) -> int:
    """A file's size; 0 for one gone since it was listed (reading it reports that)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


class SnapshotSource:
    """A file or folder written by ``kubectl get ... -o yaml|json`` (plus ``*.prom`` scrapes).

    A kind counts as complete when the snapshot holds at least one object of it, or a typed
    List of it (``ResourceClaimList`` with no items: no claims are left): loading a snapshot of
    only ResourceSlices leaves stored claims alone.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.description = f"snapshot:{self.path}"

    def read(self) -> ReadResult:
        try:
            files = snapshot_files(self.path)
        except SnapshotError as exc:
            raise SourceError(str(exc)) from exc
        load = SnapshotLoad()
        out = ReadResult(errors=load.errors, prom=load.prom, ranges=load.ranges)
        out.payload_bytes = sum(_size(p) for p in files)
        out.stream = self._stream(load, out)
        return out

    def _stream(self, load: SnapshotLoad, out: ReadResult) -> Iterator[ReadItem | ItemRun]:
        try:
            for item in iter_snapshot(self.path, load):
                if isinstance(item, ItemRun):
                    self._set_up(item, out)
                    yield item
                    continue
                spec = BY_KIND.get(item.kind)
                if spec is None:
                    out.skipped[item.kind] = out.skipped.get(item.kind, 0) + 1
                    continue
                out.complete_kinds.add(item.kind)
                # What a live read skips (pods that use no GPU), a snapshot skips too, before
                # decoding (the sync tests it, after the resourceVersion): the same cluster gives
                # the same stored objects either way.
                item.keep = spec.keep
                # A manifest without a namespace lands in "default", as kubectl apply does.
                item.prepare_with(_with_namespace if spec.namespaced else normalize, "default" if spec.namespaced else "")
                yield item
        except SnapshotError as exc:
            raise SourceError(str(exc)) from exc
        out.complete_kinds.update(k for k in load.listed if k in BY_KIND)

    @staticmethod
    def _set_up(run: ItemRun, out: ReadResult) -> None:
        """What ``_stream`` does to each item, done to a run's: items of kinds not kept are
        dropped and counted, the others set up as ``ReadItem.keep`` and ``prepare_with`` are
        (an item without a namespace, whose identity ``prepare_with`` may change, is never
        counted from its identity alone: ``Reconcile.add_run`` hands it to ``add``)."""
        ids, setup = run.ids, run.setup
        for i, ident in enumerate(ids):
            if ident is None:
                continue
            kind = ident[0]
            if kind not in setup:
                spec = BY_KIND.get(kind)
                if spec is None:
                    out.skipped[kind] = out.skipped.get(kind, 0) + 1
                    ids[i] = None
                    continue
                out.complete_kinds.add(kind)
                setup[kind] = (spec.keep, _with_namespace if spec.namespaced else normalize,
                               "default" if spec.namespaced else "")


def _with_namespace(obj: dict[str, Any]) -> dict[str, Any]:
    """``normalize`` of a namespaced object, in namespace "default" when it names none."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if not meta.get("namespace"):
        obj = {**obj, "metadata": {**meta, "namespace": "default"}}
    return normalize(obj)


def connect(*, kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False) -> tuple[Any, str]:
    """(a configured ``kubernetes.client.ApiClient``, a description of where it points).

    Credentials come from the kubeconfig (``context`` or its current one) or the pod's
    service account. Raises ``SourceError`` when they cannot be loaded."""
    from kubernetes import client, config

    cfg = client.Configuration()
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=cfg)
            description = "in-cluster"
        else:
            config.load_kube_config(config_file=kubeconfig or None, context=context or None, client_configuration=cfg)
            description = f"kubeconfig:{kubeconfig or '~/.kube/config'}" + (f"@{context}" if context else "")
    except (config.ConfigException, OSError, TypeError, ValueError) as exc:
        raise SourceError(f"cannot load cluster credentials: {exc}") from exc
    cfg.retries = 0  # retries are inventory.kubehttp's, with backoff and a deadline
    cfg.connection_pool_maxsize = 32  # a poll runs its watches at once, one connection each
    return client.ApiClient(cfg), description


class LiveSource:
    """A live API server, every list read in full (no watch, no selectors: ``inventory.watch``
    reads deltas), as raw JSON through ``inventory.kubehttp`` (retries, one deadline per
    request, the server's own message on 401/403).

    Lists are paged with ``limit``/``continue`` (stack-notes: the typed models are slow,
    memory-hungry and drop unknown fields). For DRA kinds the first served version of
    ``KindSpec.versions`` wins (v1, then v1beta2, then v1beta1); objects are normalized to v1.
    """

    def __init__(
        self,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        in_cluster: bool = False,
        page_size: int = 500,
        timeout: float = 30.0,
        kinds: tuple[KindSpec, ...] = KINDS,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.api, self.description = connect(kubeconfig=kubeconfig, context=context, in_cluster=in_cluster)
        self.http = KubeHTTP(self.api, timeout=timeout, retry=retry or RetryPolicy(total=2 * timeout))
        self.page_size = page_size
        self.timeout = timeout
        self.kinds = kinds

    def _list(self, spec: KindSpec, version: str, out: ReadResult) -> Iterator[ReadItem]:
        """Yield every object of one kind and version, page by page (one page in memory).

        A 410 on a continue token (its resourceVersion expired) relists from the start once;
        objects yielded before are yielded again, which the sync's reconcile by uid absorbs."""
        api_version = f"{spec.group}/{version}" if spec.group else version
        namespaces: tuple[str | None, ...] = spec.namespaces or (None,)
        for ns in namespaces:
            path = spec.path(version, ns)
            token: str | None = None
            relisted = False
            while True:
                query: list[tuple[str, Any]] = [("limit", self.page_size)]
                if token:
                    query.append(("continue", token))
                try:
                    body = self.http.get(path, query, verb="list")
                except KubeAPIError as exc:
                    if exc.status == 410 and token and not relisted:
                        token, relisted = None, True
                        continue
                    raise
                out.payload_bytes += len(body)
                try:
                    page = jsonlist.split_list(body)
                except jsonlist.JSONError as exc:
                    raise SourceError(f"GET {path}: response is not JSON ({exc})") from exc
                if page is None:
                    raise SourceError(f"GET {path}: no items in list response")
                for raw in page.items:
                    try:
                        # List items carry no kind/apiVersion: the item puts them back.
                        yield ReadItem.lazy(raw, kind=spec.kind, api_version=api_version, prepare=normalize)
                    except jsonlist.JSONError as exc:
                        out.errors.append(f"list {spec.kind}: an item is not an object ({exc})")
                token = page.continue_token or None
                if not token:
                    break

    def read(self) -> ReadResult:
        """Ask ``/version`` now (a dead or refusing server fails here, before any sync work);
        the lists are read lazily while the sync consumes ``ReadResult.items()``."""
        out = ReadResult()
        try:
            version = json.loads(self.http.get("/version"))  # small: the standard decoder
            out.server_version = str(version.get("gitVersion", "")) if isinstance(version, dict) else ""
        except KubeHTTPError as exc:
            raise SourceError(f"API server refused or did not answer /version: {exc.message}") from exc
        except ValueError as exc:
            raise SourceError(f"GET /version: response is not JSON ({exc})") from exc
        out.stream = self._stream(out)
        return out

    def _stream(self, out: ReadResult) -> Iterator[ReadItem]:
        for spec in self.kinds:
            missing = 0
            for version in spec.versions:
                try:
                    yield from self._list(spec, version, out)
                except KubeAPIError as exc:
                    if exc.status == 404:
                        missing += 1
                        continue
                    out.errors.append(f"list {spec.kind} ({version}): {exc.message}")
                    break
                except (KubeHTTPError, SourceError) as exc:
                    out.errors.append(f"list {spec.kind} ({version}): {getattr(exc, 'message', exc)}")
                    break
                out.complete_kinds.add(spec.kind)
                break
            if missing == len(spec.versions):
                if spec.optional:
                    out.complete_kinds.add(spec.kind)
                else:
                    out.errors.append(f"list {spec.kind}: the server serves none of {', '.join(spec.versions)}")


def open_source(
    kind: str,
    *,
    snapshot_path: str = "",
    kubeconfig: str = "",
    context: str = "",
    page_size: int = 500,
    timeout: float = 30.0,
) -> Source:
    """Build the source named ``kind`` (``snapshot``, ``kubeconfig`` or ``in_cluster``).

    Raises ``SourceError`` for an unknown kind or missing settings.
    """
    if kind == "snapshot":
        if not snapshot_path:
            raise SourceError("snapshot source needs a path")
        return SnapshotSource(snapshot_path)
    if kind == "kubeconfig":
        return LiveSource(kubeconfig=kubeconfig, context=context, page_size=page_size, timeout=timeout)
    if kind == "in_cluster":
        return LiveSource(in_cluster=True, page_size=page_size, timeout=timeout)
    raise SourceError(f"unknown source kind {kind!r}")
