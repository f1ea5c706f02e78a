"""The HTTP layer of the live source: GETs to a Kubernetes API server that survive its faults.

Pure apart from I/O: no Django. Requests go through the ``urllib3`` pool of a configured
``kubernetes.client.ApiClient`` (TLS, client certificates, bearer tokens and their refresh
come from the kubeconfig or the service account as the official client reads them), but the
body is read here, chunk by chunk, so that:

- every request has ONE overall deadline (``timeout`` seconds from its start, and never past
  the caller's ``deadline``): a body that trickles a byte every few seconds ends at the
  deadline (stack-notes: ``_request_timeout`` bounds each socket read only, and a sync hung
  170 s on such a body);
- 5xx, 429 (its ``Retry-After`` honoured), connection resets, refused connections and
  timeouts are retried with exponential backoff and full jitter, at most ``RetryPolicy.attempts``
  tries and ``RetryPolicy.total`` seconds in all;
- 401 and 403 are not retried: ``KubeAPIError`` carries the API server's own ``Status.message``
  (which verb on which resource was refused), as do all other HTTP errors.

Times are seconds (``time.monotonic``); sizes are bytes.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
CHUNK = 1 << 16


class KubeHTTPError(Exception):
    """A request that did not give a usable answer. ``message`` is one line for a SyncRun."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KubeAPIError(KubeHTTPError):
    """The server answered with an HTTP error. ``status``: the HTTP status; ``reason``:
    ``Status.reason`` (``Forbidden``, ``Expired``...) or the HTTP reason phrase; ``detail``:
    ``Status.message`` when the body is a ``Status`` (else a short excerpt of the body)."""

    def __init__(self, verb: str, path: str, status: int, reason: str, detail: str) -> None:
        self.verb, self.path, self.status, self.reason, self.detail = verb, path, status, reason, detail
        text = f"{verb} {path}: HTTP {status} {reason}".rstrip()
        super().__init__(f"{text}: {detail}" if detail else text)


class KubeUnavailable(KubeHTTPError):
    """No answer: connection refused or reset, a timeout, the overall deadline passed."""


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts``: tries in all (1 = no retry); ``base``/``cap``: the backoff before retry n
    is uniform in [0, min(cap, base * 2**n)] ("full jitter"); ``total``: seconds from the first
    try after which no retry starts; a ``Retry-After`` longer than what is left of it fails now."""

    attempts: int = 4
    base: float = 0.5
    cap: float = 8.0
    total: float = 60.0

    def backoff(self, n: int, rng: Callable[[], float] = random.random) -> float:
        return rng() * min(self.cap, self.base * (2**n))


NO_RETRY = RetryPolicy(attempts=1)


def status_detail(body: bytes) -> tuple[str, str]:
    """(``reason``, ``message``) of a ``Status`` body; ("", excerpt) for any other body."""
    try:
        doc = json.loads(body[:65536])
    except ValueError:
        return "", body[:200].decode("utf-8", "replace").strip()
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return str(doc.get("reason") or ""), str(doc.get("message") or "")
    return "", ""


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (delta-seconds form, as kube-apiserver sends it)."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None


class KubeHTTP:
    """GETs against one API server. ``api``: a configured ``kubernetes.client.ApiClient``;
    ``timeout``: the overall deadline of one try, in seconds; ``sleep``/``clock``: for tests."""

    def __init__(self, api: Any, *, timeout: float = 30.0, retry: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.timeout = timeout
        self.retry = retry
        self.sleep = sleep
        self.clock = clock
        self.bytes_read = 0
        self.requests = 0
        self.retries = 0
        self._count = threading.Lock()  # a poll's watches share this client from several threads

    # -- one try ------------------------------------------------------------------------
    def _open(self, path: str, query: list[tuple[str, Any]], until: float, read: float | None = None):
        """Send one GET; the response with its body unread. Raises ``KubeUnavailable``."""
        import urllib3

        method, url, headers, _body, _post = self.api.param_serialize(
            "GET", path, query_params=query, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        left = until - self.clock()
        if left <= 0:
            raise KubeUnavailable(f"GET {path}: deadline passed before the request")
        # A watch waits for events up to its deadline; any other read at most ``timeout``.
        timeout = urllib3.Timeout(connect=min(10.0, left), read=min(read or self.timeout, left))
        with self._count:
            self.requests += 1
        try:
            return self.api.rest_client.pool_manager.request(
                method, url, headers=headers, preload_content=False, timeout=timeout, retries=False, redirect=False,
            )
        except Exception as exc:  # urllib3: refused, reset, TLS, timeouts
            raise KubeUnavailable(f"GET {path}: {type(exc).__name__}: {exc}") from exc

    def _chunks(self, resp, path: str, until: float) -> Iterator[bytes]:
        """The body, as it arrives, never past ``until``. Raises ``KubeUnavailable``."""
        try:
            while True:
                if self.clock() > until:
                    raise KubeUnavailable(f"GET {path}: no complete answer within the deadline "
                                          f"({self.timeout:g} s; the body was still arriving)")
                chunk = resp.read1(CHUNK)
                if not chunk:
                    return
                with self._count:
                    self.bytes_read += len(chunk)
                yield chunk
        except KubeUnavailable:
            raise
        except Exception as exc:  # reset mid-body, read timeout, truncated chunked body
            raise KubeUnavailable(f"GET {path}: {type(exc).__name__} while reading the body: {exc}") from exc

    def _error(self, verb: str, path: str, resp, until: float) -> KubeAPIError:
        try:
            body = b"".join(self._chunks(resp, path, min(until, self.clock() + 5.0)))
        except KubeUnavailable:
            body = b""
        finally:
            resp.close()
        reason, detail = status_detail(body)
        return KubeAPIError(verb, path, resp.status, reason or (resp.reason or ""), detail)

    # -- with retries -------------------------------------------------------------------
    def _with_retries(self, verb: str, path: str, deadline: float | None, attempt: Callable[[float], Any]) -> Any:
        start = self.clock()
        end_retries = start + self.retry.total
        hard = deadline if deadline is not None else float("inf")
        n = 0
        while True:
            until = min(hard, self.clock() + self.timeout)
            wait: float | None = None
            try:
                return attempt(until)
            except KubeAPIError as exc:
                if exc.status not in RETRY_STATUSES:
                    raise
                last: KubeHTTPError = exc
                wait = getattr(exc, "retry_after", None)
            except KubeUnavailable as exc:
                last = exc
            n += 1
            if n >= self.retry.attempts:
                raise type(last)(*_args(last, f" (after {n} tries)"))
            pause = self.retry.backoff(n - 1) if wait is None else wait
            now = self.clock()
            if now + pause > min(end_retries, hard):
                why = f"Retry-After {wait:g} s is past the retry budget" if wait is not None else "retry budget spent"
                raise type(last)(*_args(last, f" ({why} after {n} tries)"))
            with self._count:
                self.retries += 1
            self.sleep(pause)

    def get(self, path: str, query: list[tuple[str, Any]] | None = None, *, verb: str = "get",
            deadline: float | None = None) -> bytes:
        """The whole body of a 2xx answer to GET ``path``. ``verb`` names the request in
        messages (``list``, ``get``); ``deadline``: an absolute ``clock()`` time no try runs past.
        Raises ``KubeAPIError`` (HTTP error, after retries for 5xx/429) or ``KubeUnavailable``."""
        q = list(query or [])

        def attempt(until: float) -> bytes:
            resp = self._open(path, q, until)
            if resp.status >= 400:
                err = self._error(verb, path, resp, until)
                err.retry_after = retry_after(resp.headers.get("Retry-After"))  # type: ignore[attr-defined]
                raise err
            try:
                return b"".join(self._chunks(resp, path, until))
            finally:
                resp.close()

        return self._with_retries(verb, path, deadline, attempt)

    def lines(self, path: str, query: list[tuple[str, Any]] | None = None, *, verb: str = "watch",
              deadline: float) -> Iterator[bytes]:
        """The lines of a streamed 2xx answer (a watch: one JSON event per line), until the
        server ends it or ``deadline`` passes (then the generator simply stops).

        Opening the stream is retried as ``get`` is; a stream that breaks once open is not
        (the caller resumes from the last event it applied). Raises ``KubeAPIError``,
        ``KubeUnavailable``, and ``StreamCut`` when the stream ends inside a line."""
        q = list(query or [])

        def attempt(until: float):
            resp = self._open(path, q, deadline, read=deadline - self.clock())
            if resp.status >= 400:
                err = self._error(verb, path, resp, deadline)
                err.retry_after = retry_after(resp.headers.get("Retry-After"))  # type: ignore[attr-defined]
                raise err
            return resp

        resp = self._with_retries(verb, path, deadline, attempt)
        rest = b""
        try:
            while True:
                if self.clock() >= deadline:
                    return
                try:
                    chunk = resp.read1(CHUNK)
                except Exception as exc:
                    if _is_timeout(exc) and self.clock() >= deadline - 0.05:
                        return  # the read timeout is the deadline: a quiet watch, not a fault
                    raise KubeUnavailable(f"{verb} {path}: {type(exc).__name__} in the stream: {exc}") from exc
                if not chunk:
                    if rest.strip():
                        raise StreamCut(f"{verb} {path}: the stream ended inside an event ({len(rest)} bytes of it)")
                    return
                with self._count:
                    self.bytes_read += len(chunk)
                rest += chunk
                *complete, rest = rest.split(b"\n")
                for line in complete:
                    if line.strip():
                        yield line
        finally:
            resp.close()


class StreamCut(KubeUnavailable):
    """A streamed answer ended in the middle of a line (an event cut in two)."""


def _is_timeout(exc: BaseException) -> bool:
    import socket

    import urllib3

    return isinstance(exc, (TimeoutError, socket.timeout, urllib3.exceptions.TimeoutError)) or "timed out" in str(exc)


def _args(err: KubeHTTPError, suffix: str) -> tuple[Any, ...]:
    if isinstance(err, KubeAPIError):
        return (err.verb, err.path, err.status, err.reason, (err.detail + suffix) if err.detail else suffix.strip())
    return (err.message + suffix,)
