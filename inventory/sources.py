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
from .kinds import BY_KIND, KIND_NAMES, KINDS, KindSpec
from .normalize import UnknownAPIVersion, normalize
from .snapshot import SnapshotError, SnapshotLoad, iter_snapshot, snapshot_files


class SourceError(Exception):
    """The source cannot be read at all (bad path, unreachable API server, no credentials)."""


@dataclass
class ReadResult:
    """Objects read from a source.

    ``objects``: normalized raw objects of the kinds in ``kinds.KINDS``, read up front (small
    reads, tests); ``stream``: the same, produced lazily as ``(object, raw_text)`` while the
    sync consumes them, so a large cluster is never held whole in memory. ``raw_text`` is the
    object's exact compact JSON when the source had it, else None. ``items()`` yields both.
    The fields below are filled in as the stream is read: final once ``items()`` is exhausted.
    ``complete_kinds``: kinds whose full list was read without error; the sync only ever
    deletes vanished objects of these kinds, and only when ``errors`` is empty.
    ``skipped``: kind -> count of objects of kinds this product does not keep.
    ``errors``: one message per failed page or malformed object.
    ``prom``: DCGM exporter scrapes (file name -> Prometheus text), snapshots only.
    """

    objects: list[dict[str, Any]] = field(default_factory=list)
    stream: Iterable[tuple[dict[str, Any], str | None]] | None = None
    complete_kinds: set[str] = field(default_factory=set)
    skipped: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    prom: dict[str, str] = field(default_factory=dict)
    server_version: str = ""
    payload_bytes: int = 0
    # Set by the sync: did reconciling this read create, update or delete anything?
    changed: bool = True

    def items(self) -> Iterator[tuple[dict[str, Any], str | None]]:
        """Every object once as ``(object, raw_text)``; the stream can be consumed only once.

        Raises ``SourceError`` when the source fails while being read."""
        for obj in self.objects:
            yield obj, None
        stream, self.stream = self.stream, None
        if stream is not None:
            yield from stream


class Source(Protocol):
    description: str

    def read(self) -> ReadResult: ...


class SnapshotSource:
    """A file or folder written by ``kubectl get ... -o yaml|json`` (plus ``*.prom`` scrapes).

    A kind counts as complete when the snapshot holds at least one object of it: loading a
    snapshot of only ResourceSlices leaves stored claims alone.
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
        out = ReadResult(errors=load.errors, prom=load.prom)
        out.payload_bytes = sum(p.stat().st_size for p in files)
        out.stream = self._stream(load, out)
        return out

    def _stream(self, load: SnapshotLoad, out: ReadResult) -> Iterator[tuple[dict[str, Any], str | None]]:
        try:
            for obj, text in iter_snapshot(self.path, load):
                kind = obj.get("kind")
                if kind not in KIND_NAMES:
                    out.skipped[str(kind)] = out.skipped.get(str(kind), 0) + 1
                    continue
                meta = obj.get("metadata") or {}
                if BY_KIND[str(kind)].namespaced and not meta.get("namespace"):
                    # A manifest without a namespace lands in "default", as kubectl apply does.
                    obj, text = {**obj, "metadata": {**meta, "namespace": "default"}}, None
                try:
                    v1 = normalize(obj)
                except UnknownAPIVersion as exc:
                    out.errors.append(f"{kind} {meta.get('name')}: {exc}")
                    continue
                out.complete_kinds.add(str(kind))
                yield v1, (text if v1 is obj else None)
        except SnapshotError as exc:
            raise SourceError(str(exc)) from exc


class LiveSource:
    """A live API server through the official ``kubernetes`` client, reading raw JSON.

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
    ) -> None:
        from kubernetes import client, config

        cfg = client.Configuration()
        try:
            if in_cluster:
                config.load_incluster_config(client_configuration=cfg)
                self.description = "in-cluster"
            else:
                config.load_kube_config(
                    config_file=kubeconfig or None, context=context or None, client_configuration=cfg
                )
                self.description = f"kubeconfig:{kubeconfig or '~/.kube/config'}" + (
                    f"@{context}" if context else ""
                )
        except (config.ConfigException, OSError, TypeError, ValueError) as exc:
            raise SourceError(f"cannot load cluster credentials: {exc}") from exc
        cfg.retries = 0
        self.api = client.ApiClient(cfg)
        self.page_size = page_size
        self.timeout = timeout
        self.kinds = kinds

    def _get(self, path: str, query: list[tuple[str, Any]]) -> str:
        """The response body of GET ``path`` as text; raises ``ApiException`` for HTTP errors
        and ``SourceError`` when the server cannot be reached or answers with no text."""
        from kubernetes.client.exceptions import ApiException

        try:
            method, url, headers, _body, _post = self.api.param_serialize(
                "GET",
                path,
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            resp = self.api.call_api(method, url, header_params=headers, _request_timeout=self.timeout)
            status = resp.status
            data = resp.read()
        except Exception as exc:  # urllib3 errors: connection refused, timeouts, TLS
            raise SourceError(f"GET {path}: {type(exc).__name__}: {exc}") from exc
        if status >= 400:
            raise ApiException(status=status, reason=getattr(resp, "reason", "") or "error")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(f"GET {path}: response is not UTF-8 text") from exc

    @staticmethod
    def _with_type(item: dict[str, Any], text: str, kind: str, api_version: str) -> str | None:
        """List items carry no kind/apiVersion: put them back in the object and its text."""
        missing = {k: v for k, v in (("kind", kind), ("apiVersion", api_version)) if k not in item}
        had_keys = bool(item)
        item.update(missing)
        if "\n" in text or not had_keys:
            return None
        if not missing:
            return text
        return "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in missing.items()) + "," + text[1:]

    def _list(self, spec: KindSpec, version: str, out: ReadResult) -> Iterator[tuple[dict[str, Any], str | None]]:
        """Yield every object of one kind and version, page by page (one page in memory).

        A 410 on a continue token (its resourceVersion expired) relists from the start once;
        objects yielded before are yielded again, which the sync's reconcile by uid absorbs."""
        from kubernetes.client.exceptions import ApiException

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
                    body = self._get(path, query)
                except ApiException as exc:
                    if exc.status == 410 and token and not relisted:
                        token, relisted = None, True
                        continue
                    raise
                out.payload_bytes += len(body)
                head = jsonlist.ListHead()
                try:
                    for item, text in jsonlist.iter_items(body, head):
                        if isinstance(item, dict):
                            raw = self._with_type(item, text, spec.kind, api_version)
                            v1 = normalize(item)
                            yield v1, (raw if v1 is item else None)
                except jsonlist.NotAList as exc:
                    raise SourceError(f"GET {path}: no items in list response") from exc
                except ValueError as exc:  # json.JSONDecodeError
                    raise SourceError(f"GET {path}: response is not JSON ({exc})") from exc
                meta = head.fields.get("metadata")
                token = (meta.get("continue") if isinstance(meta, dict) else None) or None
                if not token:
                    break

    def read(self) -> ReadResult:
        """Ask ``/version`` now (a dead or refusing server fails here, before any sync work);
        the lists are read lazily while the sync consumes ``ReadResult.items()``."""
        from kubernetes.client.exceptions import ApiException

        out = ReadResult()
        try:
            version = json.loads(self._get("/version", []))
            out.server_version = str(version.get("gitVersion", "")) if isinstance(version, dict) else ""
        except ApiException as exc:
            raise SourceError(f"API server refused /version: {exc.status} {exc.reason}") from exc
        except ValueError as exc:
            raise SourceError(f"GET /version: response is not JSON ({exc})") from exc
        out.stream = self._stream(out)
        return out

    def _stream(self, out: ReadResult) -> Iterator[tuple[dict[str, Any], str | None]]:
        from kubernetes.client.exceptions import ApiException

        for spec in self.kinds:
            missing = 0
            for version in spec.versions:
                try:
                    yield from self._list(spec, version, out)
                except ApiException as exc:
                    if exc.status == 404:
                        missing += 1
                        continue
                    out.errors.append(f"list {spec.kind} ({version}): HTTP {exc.status} {exc.reason}")
                    break
                except (SourceError, UnknownAPIVersion) as exc:
                    out.errors.append(f"list {spec.kind} ({version}): {exc}")
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
