"""A small threaded fake Kubernetes API server for the live source's tests.

Behaves like kube-apiserver where the product depends on it: ``/version``; list endpoints
for the paths it is given, paged with ``limit``/``continue`` (the continue token pins the
list's ``resourceVersion``, as the real server's does); ``resourceVersion`` on lists and
objects; 404 for resources it does not serve; and failures on demand: an HTTP status on
the N-th page of a path, or a delay longer than the client's timeout.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import yaml

from inventory.kinds import KINDS


class FakeAPIServer:
    def __init__(self, version: str = "v1.36.1") -> None:
        self.version = version
        self.lists: dict[str, list[dict]] = {}
        self.resource_version = 1000
        self.failures: dict[tuple[str, int], int] = {}  # (path, page index) -> HTTP status
        self.fail_once: dict[tuple[str, int], int] = {}  # as failures, served a single time
        self.delays: dict[str, float] = {}  # path -> seconds before answering
        self.requests: list[str] = []
        self.token = "test-token"
        self._server: ThreadingHTTPServer | None = None

    # -- content -----------------------------------------------------------------
    def serve_objects(self, objects: list[dict], dra_version: str = "v1") -> None:
        """Put raw objects on the list paths the product reads (by kind)."""
        by_kind = {k.kind: k for k in KINDS}
        for obj in objects:
            spec = by_kind.get(obj.get("kind"))
            if spec is None:
                continue
            version = dra_version if spec.group == "resource.k8s.io" else spec.versions[0]
            ns = (obj.get("metadata") or {}).get("namespace")
            path = spec.path(version, ns if spec.namespaces else None)
            item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            self.lists.setdefault(path, []).append(item)

    def empty_lists_for_all_kinds(self, dra_version: str = "v1") -> None:
        for spec in KINDS:
            if spec.optional:
                continue
            version = dra_version if spec.group == "resource.k8s.io" else spec.versions[0]
            for ns in spec.namespaces or (None,):
                self.lists.setdefault(spec.path(version, ns), [])

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlparse(self.path)
                fake.requests.append(self.path)
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._send(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
                if url.path in fake.delays:
                    time.sleep(fake.delays[url.path])
                if url.path == "/version":
                    return self._send(200, {"major": "1", "minor": "36", "gitVersion": fake.version})
                if url.path not in fake.lists:
                    return self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
                q = parse_qs(url.query)
                limit = int(q.get("limit", ["500"])[0])
                token = q.get("continue", [None])[0]
                if token:
                    state = json.loads(base64.urlsafe_b64decode(token))
                    start, rv = state["start"], state["rv"]
                else:
                    start, rv = 0, fake.resource_version
                page_index = start // max(limit, 1)
                status = fake.failures.get((url.path, page_index)) or fake.fail_once.pop((url.path, page_index), None)
                if status:
                    return self._send(status, {"kind": "Status", "code": status, "reason": "Injected"})
                items = fake.lists[url.path]
                page = items[start : start + limit]
                meta = {"resourceVersion": str(rv)}
                if start + limit < len(items):
                    meta["continue"] = base64.urlsafe_b64encode(
                        json.dumps({"start": start + limit, "rv": rv}).encode()
                    ).decode()
                return self._send(200, {"kind": "List", "apiVersion": "v1", "metadata": meta, "items": page})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def write_kubeconfig(self, path: Path, url: str, context: str = "fake") -> Path:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": url}}],
            "users": [{"name": context, "user": {"token": self.token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(doc))
        return path
