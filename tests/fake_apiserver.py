"""A small threaded fake Kubernetes API server for the live source's tests.

Behaves like kube-apiserver where the product (and a real Go client, kubectl: see
tests/live/test_fake_apiserver_answers_kubectl.py) depends on it:

- ``/version``; discovery (``/api``, ``/apis``, ``/api/v1``, ``/apis/<group>/<version>``) for
  the kinds of ``inventory.kinds``, answered as plain JSON so clients use legacy discovery;
- lists of the paths it is given, paged with ``limit``/``continue`` (the continue token pins
  the list's ``resourceVersion``, as the real server's does; a token older than the last
  ``compact()`` is refused with 410 ``Expired``), a namespaced path filtering a cluster-wide
  collection, ``fieldSelector`` (``a.b=v``, ``a.b!=v``, comma = and) and ``labelSelector``
  (``k=v``, ``k!=v``, ``k``);
- watches (``watch=true``): every change after ``resourceVersion`` (ADDED / MODIFIED /
  DELETED with kind and apiVersion in the object), then new changes as they happen, until
  ``timeoutSeconds``; with ``allowWatchBookmarks`` a BOOKMARK 2 s before the timeout (none for
  a timeout under 2 s), as kube-apiserver's cacher schedules it (``bookmark_after``
  overrides), carrying the current resourceVersion; a resourceVersion older than the last ``compact()`` gets, as the real
  server sends it, HTTP 200 and one ERROR event whose object is a ``Status`` with code 410;
  streamed with chunked transfer encoding;
- changes on demand: ``apply(obj)`` (add or modify, a new resourceVersion) and ``remove(obj)``;
- faults on demand (``inject``): an HTTP status (with ``Retry-After``, a ``Status`` message,
  e.g. a 403 naming verb and resource as the real server does), a connection reset, a body
  that trickles, malformed JSON, a watch stream cut in the middle of an event; plus the older
  ``failures``/``fail_once`` (status on the N-th page of a path) and ``delays``. A wrong
  bearer token gets 401 with a ``Status``.
"""

from __future__ import annotations

import base64
import copy
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import yaml

from inventory.kinds import KINDS


@dataclass
class Fault:
    """One injected fault. ``path``: the request path it applies to (prefix match; "" = any
    but ``/version``); ``watch``: True = watch requests only, False = lists and gets only,
    None = both; ``times``: how many requests it hits (then it is gone).
    ``what``: ``status`` (HTTP ``status`` with a ``Status`` body: ``reason``, ``message``, and
    ``retry_after`` seconds), ``reset`` (the connection is reset before any answer),
    ``trickle`` (200 whose body arrives one byte every ``interval`` seconds), ``malformed``
    (200 with a body that is not JSON), ``cut`` (a watch sends its events, then half of one
    more, and ends), ``gone`` (a watch sends its events, then an ERROR event carrying a 410
    Status, as when a watcher falls behind the watch cache), ``expire`` (the next continue token of a list of ``path`` has expired:
    the fake compacts just before answering it, and the real 410 follows)."""

    what: str
    path: str = ""
    watch: bool | None = None
    times: int = 1
    status: int = 500
    reason: str = "InternalError"
    message: str = "injected fault"
    retry_after: float | None = None
    interval: float = 5.0
    hits: int = 0


@dataclass
class _Change:
    rv: int
    type: str
    path: str
    obj: dict = field(default_factory=dict)


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def _dig(obj: dict, dotted: str):
    cur = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _field_match(obj: dict, selector: str) -> bool:
    for term in filter(None, selector.split(",")):
        neg = "!=" in term
        key, _, want = term.partition("!=" if neg else "=")
        want = want.lstrip("=")
        have = _dig(obj, key.strip())
        have = "" if have is None else str(have)
        if (have == want) == neg:
            return False
    return True


def _label_match(obj: dict, selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            k, _, v = term.partition("!=")
            if labels.get(k.strip()) == v.strip():
                return False
        elif "=" in term:
            k, _, v = term.partition("=")
            if labels.get(k.strip()) != v.strip().lstrip("="):
                return False
        elif term.strip() not in labels:
            return False
    return True


def _self_signed() -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) of a throwaway certificate for 127.0.0.1 and localhost."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-apiserver")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                    x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


class FakeAPIServer:
    def __init__(self, version: str = "v1.36.1") -> None:
        self.version = version
        self.lists: dict[str, list[dict]] = {}
        self.resource_version = 1000
        self.compacted = 0  # resourceVersions at or below this are gone (410)
        self.failures: dict[tuple[str, int], int] = {}  # (path, page index) -> HTTP status
        self.fail_once: dict[tuple[str, int], int] = {}  # as failures, served a single time
        self.delays: dict[str, float] = {}  # path -> seconds before answering
        self.faults: list[Fault] = []
        self.requests: list[str] = []
        self.bytes_sent = 0
        self.token = "test-token"
        self.user = "system:serviceaccount:claimscope:claimscope"
        self.bookmark_after: float | None = None  # seconds into a watch; None = 2 s before its timeout
        self.history: list[_Change] = []
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._api_versions: dict[str, str] = {}  # group -> served version

    # -- content -----------------------------------------------------------------
    def _path_of(self, obj: dict, dra_version: str | None = None) -> tuple[str, object] | None:
        by_kind = {k.kind: k for k in KINDS}
        spec = by_kind.get(obj.get("kind"))
        if spec is None:
            return None
        version = (dra_version or self._api_versions.get(spec.group, "v1")) if spec.group == "resource.k8s.io" else spec.versions[0]
        ns = (obj.get("metadata") or {}).get("namespace")
        return spec.path(version, ns if spec.namespaces else None), spec

    def serve_objects(self, objects: list[dict], dra_version: str = "v1") -> None:
        """Put raw objects on the list paths the product reads (by kind), as given."""
        self._api_versions["resource.k8s.io"] = dra_version
        for obj in objects:
            where = self._path_of(obj, dra_version)
            if where is None:
                continue
            item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            self.lists.setdefault(where[0], []).append(item)

    def empty_lists_for_all_kinds(self, dra_version: str = "v1") -> None:
        self._api_versions["resource.k8s.io"] = dra_version
        for spec in KINDS:
            if spec.optional:
                continue
            version = dra_version if spec.group == "resource.k8s.io" else spec.versions[0]
            for ns in spec.namespaces or (None,):
                self.lists.setdefault(spec.path(version, ns), [])

    def _bump(self) -> int:
        self.resource_version += 1
        return self.resource_version

    def apply(self, obj: dict) -> dict:
        """Add or modify an object (matched by uid, else namespace/name): a new resourceVersion,
        a MODIFIED or ADDED event for watchers. Returns the stored item."""
        path, _spec = self._path_of(obj)
        with self._changed:
            item = copy.deepcopy({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
            meta = item.setdefault("metadata", {})
            rv = self._bump()
            meta["resourceVersion"] = str(rv)
            items = self.lists.setdefault(path, [])
            at = self._find(items, meta)
            if at is None:
                items.append(item)
                kind = "ADDED"
            else:
                items[at] = item
                kind = "MODIFIED"
            self.history.append(_Change(rv, kind, path, self._full(path, item)))
            self._changed.notify_all()
        return item

    def remove(self, obj: dict) -> None:
        """Delete an object: a DELETED event (the object at a new resourceVersion)."""
        path, _spec = self._path_of(obj)
        with self._changed:
            items = self.lists.get(path, [])
            at = self._find(items, obj.get("metadata") or {})
            if at is None:
                raise KeyError(obj.get("metadata"))
            item = items.pop(at)
            rv = self._bump()
            gone = copy.deepcopy(item)
            gone.setdefault("metadata", {})["resourceVersion"] = str(rv)
            self.history.append(_Change(rv, "DELETED", path, self._full(path, gone)))
            self._changed.notify_all()

    def compact(self) -> None:
        """Forget history up to now: older resourceVersions (watches, continue tokens) get 410."""
        with self._changed:
            self.compacted = self.resource_version
            self.history = []

    def inject(self, what: str, path: str = "", **kw) -> Fault:
        fault = Fault(what, path, **kw)
        self.faults.append(fault)
        return fault

    @staticmethod
    def _find(items: list[dict], meta: dict) -> int | None:
        uid, ns, name = meta.get("uid"), meta.get("namespace"), meta.get("name")
        for i, it in enumerate(items):
            m = it.get("metadata") or {}
            if (uid and m.get("uid") == uid) or (not uid and m.get("name") == name and m.get("namespace") == ns):
                return i
        return None

    def _spec_of_path(self, path: str):
        for spec in KINDS:
            if path.endswith("/" + spec.plural):
                base = path[: -len(spec.plural) - 1]
                if (spec.group and base.startswith(f"/apis/{spec.group}/")) or (not spec.group and base.startswith("/api/")):
                    return spec
        return None

    def _full(self, path: str, item: dict) -> dict:
        """The item as a watch event carries it: with kind and apiVersion."""
        spec = self._spec_of_path(path)
        version = path.split("/")[3] if path.startswith("/apis/") else "v1"
        out = {"kind": spec.kind if spec else "Unknown",
               "apiVersion": f"{spec.group}/{version}" if spec and spec.group else version}
        out.update(item)
        return out

    # -- routing -----------------------------------------------------------------
    def _collection(self, path: str) -> tuple[str, str | None] | None:
        """(stored collection path, namespace filter) for a request path, or None."""
        if path in self.lists:
            return path, None
        parts = path.split("/")
        if "namespaces" in parts:
            i = parts.index("namespaces")
            if i + 2 < len(parts):
                ns = parts[i + 1]
                wide = "/".join(parts[:i] + parts[i + 2 :])
                if wide in self.lists:
                    return wide, ns
        return None

    def _items(self, coll: str, ns: str | None, q: dict) -> list[dict]:
        items = self.lists[coll]
        if coll not in self.lists or not isinstance(items, list):
            return []
        out = [it for it in items if ns is None or (it.get("metadata") or {}).get("namespace") == ns]
        if "fieldSelector" in q:
            out = [it for it in out if _field_match(it, q["fieldSelector"][0])]
        if "labelSelector" in q:
            out = [it for it in out if _label_match(it, q["labelSelector"][0])]
        return out

    def _discovery(self, path: str) -> dict | None:
        groups: dict[str, set[str]] = {}
        for spec in KINDS:
            served = [v for v in spec.versions if any(p.startswith(spec.path(v).rsplit("/", 1)[0] + "/") for p in self.lists)]
            for v in served:
                groups.setdefault(spec.group, set()).add(v)
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if path == "/apis":
            out = []
            for g, vs in sorted(groups.items()):
                if not g:
                    continue
                versions = [{"groupVersion": f"{g}/{v}", "version": v} for v in sorted(vs)]
                out.append({"name": g, "versions": versions, "preferredVersion": versions[0]})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            group, version = "", parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            group, version = parts[1], parts[2]
        else:
            return None
        if version not in groups.get(group, set()):
            return None
        resources = [
            {"name": s.plural, "singularName": s.kind.lower(), "namespaced": s.namespaced, "kind": s.kind,
             "verbs": ["get", "list", "watch"]}
            for s in KINDS if s.group == group and version in s.versions
        ]
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version,
                "resources": resources}

    def _fault_for(self, path: str, watch: bool) -> Fault | None:
        for f in self.faults:
            if f.hits >= f.times:
                continue
            if f.path and not path.startswith(f.path):
                continue
            if not f.path and path == "/version":
                continue
            if f.watch is not None and f.watch != watch:
                continue
            if f.what == "expire":
                continue  # consumed by the list it expires
            f.hits += 1
            return f
        return None

    def _forbidden_message(self, path: str, watch: bool) -> str:
        spec = self._spec_of_path(path)
        verb = "watch" if watch else "list"
        resource = spec.plural if spec else path.rsplit("/", 1)[-1]
        group = spec.group if spec else ""
        full = f"{resource}.{group}" if group else resource
        parts = path.split("/")
        scope = f'in the namespace "{parts[parts.index("namespaces") + 1]}"' if "namespaces" in parts else "at the cluster scope"
        return (f'{full} is forbidden: User "{self.user}" cannot {verb} resource "{resource}" in API group '
                f'"{group}" {scope}')

    # -- lifecycle ---------------------------------------------------------------
    def start(self, tls: bool = False) -> str:
        """Serve on a free loopback port; returns the URL. ``tls``: https with a self-signed
        certificate for 127.0.0.1 (Go clients such as kubectl send no bearer token over
        plain http); ``write_kubeconfig`` then trusts it."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                fake.bytes_sent += len(data)

            def _reset(self) -> None:
                # SO_LINGER 0: close sends a TCP RST, as a dropped connection looks to a client.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True

            def _trickle(self, body: bytes, interval: float) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for b in body:
                        if fake._stopping.wait(interval):
                            break
                        self.wfile.write(bytes([b]))
                        self.wfile.flush()
                except OSError:
                    pass
                self.close_connection = True

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                fake.bytes_sent += len(data)

            def _apply_fault(self, fault: Fault, path: str, watch: bool) -> bool:
                """Serve ``fault`` if it answers instead of the request; True when it did."""
                if fault.what == "status":
                    headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                    message = fault.message
                    if fault.status == 403 and fault.message == "injected fault":
                        message = fake._forbidden_message(path, watch)
                    reason = fault.reason if fault.reason != "InternalError" or fault.status >= 500 else {
                        401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired", 429: "TooManyRequests"
                    }.get(fault.status, fault.reason)
                    self._send(fault.status, _status(fault.status, reason, message), headers)
                    return True
                if fault.what == "reset":
                    self._reset()
                    return True
                if fault.what == "malformed" and watch:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self._chunk(b'{"type":"MODIFIED","object":{"kind":"ResourceClaim",metadata}}\n')
                    self._chunk(b"")
                    return True
                if fault.what == "malformed":
                    data = b'{"kind":"List","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"x"'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return True
                return False

            def do_GET(self):
                url = urlparse(self.path)
                q = parse_qs(url.query)
                watch = q.get("watch", ["false"])[0] in ("true", "1")
                fake.requests.append(self.path)
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._send(401, _status(401, "Unauthorized", "Unauthorized"))
                if url.path in fake.delays:
                    time.sleep(fake.delays[url.path])
                fault = fake._fault_for(url.path, watch)
                if fault is not None and fault.what not in ("trickle", "cut", "expire", "gone") and self._apply_fault(fault, url.path, watch):
                    return None
                if url.path == "/version":
                    return self._send(200, {"major": "1", "minor": "36", "gitVersion": fake.version, "platform": "linux/amd64"})
                disc = fake._discovery(url.path)
                if disc is not None:
                    return self._send(200, disc)
                where = fake._collection(url.path)
                if where is None:
                    return self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))
                if watch:
                    return self._watch(url.path, where, q, fault)
                return self._list(url.path, where, q, fault)

            def _list(self, path, where, q, fault):
                limit = int(q.get("limit", ["0"])[0] or 0)
                token = q.get("continue", [None])[0]
                if token and any(f.what == "expire" and path.startswith(f.path) and f.hits < f.times for f in fake.faults):
                    # etcd compacted while the client was paging: its token's revision is gone.
                    f = next(f for f in fake.faults if f.what == "expire" and path.startswith(f.path) and f.hits < f.times)
                    f.hits += 1
                    with fake._changed:
                        fake._bump()
                    fake.compact()
                if token:
                    state = json.loads(base64.urlsafe_b64decode(token))
                    start, rv = state["start"], state["rv"]
                    if rv < fake.compacted:
                        return self._send(410, _status(410, "Expired", "The provided continue parameter is too old to "
                                                       "display a consistent list result. You can start a new list "
                                                       "without the continue parameter."))
                else:
                    start, rv = 0, fake.resource_version
                page_index = start // max(limit, 1)
                status = fake.failures.get((path, page_index)) or fake.fail_once.pop((path, page_index), None)
                if status:
                    return self._send(status, _status(status, "Injected", "injected failure"))
                items = fake._items(where[0], where[1], q)
                page = items[start : start + limit] if limit else items[start:]
                meta = {"resourceVersion": str(rv)}
                if limit and start + limit < len(items):
                    meta["continue"] = base64.urlsafe_b64encode(
                        json.dumps({"start": start + limit, "rv": rv}).encode()
                    ).decode()
                head = fake._full(where[0], {})  # a List's kind and apiVersion are its items'
                body = {"kind": head["kind"] + "List", "apiVersion": head["apiVersion"], "metadata": meta, "items": page}
                if fault is not None and fault.what == "trickle":
                    return self._trickle(json.dumps(body).encode(), fault.interval)
                return self._send(200, body)

            def _watch(self, path, where, q, fault):
                coll, ns = where
                since = q.get("resourceVersion", [""])[0]
                timeout = float(q.get("timeoutSeconds", ["1800"])[0] or 1800)
                bookmarks = q.get("allowWatchBookmarks", ["false"])[0] in ("true", "1")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                end = time.monotonic() + timeout
                # kube-apiserver's cacher schedules a watcher's bookmark 2 s before its deadline
                # (or a minute on, whichever is sooner), and none when that is already past.
                after = fake.bookmark_after if fake.bookmark_after is not None else min(timeout - 2, 60.0)
                bookmark_at = time.monotonic() + after if after >= 0 else None
                try:
                    if since in ("", "0"):
                        # No resourceVersion (or "0", any): the current state as synthetic
                        # ADDED events, then the changes after it.
                        with fake._changed:
                            sent = fake.resource_version
                            now_items = [copy.deepcopy(it) for it in fake._items(coll, ns, q)]
                        for it in now_items:
                            self._chunk(json.dumps({"type": "ADDED", "object": fake._full(coll, it)}).encode() + b"\n")
                    else:
                        sent = int(since)
                    if since not in ("", "0") and sent < fake.compacted:
                        status = _status(410, "Expired", f"too old resource version: {sent} ({fake.compacted})")
                        self._chunk(json.dumps({"type": "ERROR", "object": status}).encode() + b"\n")
                        self._chunk(b"")
                        return None
                    cut = fault is not None and fault.what == "cut"
                    trickle = fault is not None and fault.what == "trickle"
                    if trickle:
                        line = json.dumps({"type": "BOOKMARK", "object": {"kind": "Status", "metadata": {}}}).encode()
                        for b in line:
                            if fake._stopping.wait(fault.interval):
                                break
                            self._chunk(bytes([b]))
                        return None
                    while not fake._stopping.is_set():
                        with fake._changed:
                            pending = [c for c in fake.history if c.rv > sent and c.path == coll]
                            newest = fake.resource_version
                        for c in pending:
                            sent = c.rv
                            obj = c.obj
                            if ns is not None and (obj.get("metadata") or {}).get("namespace") != ns:
                                continue
                            if "fieldSelector" in q and not _field_match(obj, q["fieldSelector"][0]):
                                continue
                            if "labelSelector" in q and not _label_match(obj, q["labelSelector"][0]):
                                continue
                            self._chunk(json.dumps({"type": c.type, "object": obj}).encode() + b"\n")
                        if fault is not None and fault.what == "gone":
                            # The watcher fell behind the watch cache: an ERROR event whose
                            # Status says 410, after the events it had.
                            status = _status(410, "Expired", f"too old resource version: {since} ({sent})")
                            self._chunk(json.dumps({"type": "ERROR", "object": status}).encode() + b"\n")
                            self._chunk(b"")
                            return None
                        if cut:
                            half = json.dumps({"type": "MODIFIED", "object": {"kind": "Pod", "metadata": {"name": "cut"}}})
                            self._chunk(half[: len(half) // 2].encode())
                            self.wfile.write(b"0\r\n\r\n")  # the stream ends inside the event
                            self.close_connection = True
                            return None
                        now = time.monotonic()
                        if bookmarks and bookmark_at is not None and now >= bookmark_at:
                            sent = max(sent, newest)
                            mark = {"kind": fake._full(coll, {})["kind"], "apiVersion": fake._full(coll, {})["apiVersion"],
                                    "metadata": {"resourceVersion": str(sent)}}
                            self._chunk(json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n")
                            bookmark_at = None
                        if now >= end:
                            break
                        with fake._changed:
                            wait_for = min(end, bookmark_at or end) - time.monotonic()
                            if fake.resource_version == newest and wait_for > 0:
                                fake._changed.wait(min(wait_for, 0.25))
                    self._chunk(b"")
                except OSError:
                    self.close_connection = True
                return None

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request, client_address):
                pass  # a client that gave up (a deadline, a reset fault) is not news

        self._stopping.clear()
        self._server = Server(("127.0.0.1", 0), Handler)
        self.ca_pem = b""
        if tls:
            import ssl
            import tempfile

            cert, key = _self_signed()
            self.ca_pem = cert
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "c.pem").write_bytes(cert)
                (Path(tmp) / "k.pem").write_bytes(key)
                ctx.load_cert_chain(Path(tmp) / "c.pem", Path(tmp) / "k.pem")
            self._server.socket = ctx.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"{'https' if tls else 'http'}://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def write_kubeconfig(self, path: Path, url: str, context: str = "fake") -> Path:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": url, **(
                {"certificate-authority-data": base64.b64encode(self.ca_pem).decode()} if getattr(self, "ca_pem", b"") else {})}}],
            "users": [{"name": context, "user": {"token": self.token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(doc))
        return path
