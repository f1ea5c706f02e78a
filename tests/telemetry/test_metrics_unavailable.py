"""Every way of not getting an answer from Prometheus raises MetricsUnavailable."""

from __future__ import annotations

import socket
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from inventory.prometheus import MetricsUnavailable, latest_samples, range_series
from tests.prometheus_server import free_port

NOW = datetime(2026, 3, 10, 3, 41, 29, tzinfo=UTC)


def test_a_dead_port_raises_metrics_unavailable():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(MetricsUnavailable, match="cannot reach Prometheus"):
        latest_samples(url, timeout_s=2)


def test_a_server_that_never_answers_raises_metrics_unavailable_after_the_timeout():
    with socket.socket() as listener:  # accepts the TCP connection, never replies
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(MetricsUnavailable, match="timed out"):
            latest_samples(url, timeout_s=0.5)


class _Canned(BaseHTTPRequestHandler):
    status = 200
    body = b""

    def do_GET(self):
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def canned():
    servers = []

    def serve(status: int, body: bytes) -> str:
        handler = type("H", (_Canned,), {"status": status, "body": body})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.mark.parametrize("status", [500, 503, 404])
def test_a_non_200_status_raises_metrics_unavailable(canned, status):
    with pytest.raises(MetricsUnavailable, match=f"HTTP Status Code {status}"):
        latest_samples(canned(status, b'{"status":"error"}'), timeout_s=2)


@pytest.mark.parametrize("body", [b"<html>proxy login</html>", b'{"status":"success"}', b"[1,2]"])
def test_an_answer_that_is_not_prometheus_json_raises_metrics_unavailable(canned, body):
    with pytest.raises(MetricsUnavailable, match="unreadable answer"):
        latest_samples(canned(200, body), timeout_s=2)
    with pytest.raises(MetricsUnavailable):
        range_series(canned(200, body), "up", NOW, NOW, 15, timeout_s=2)


def test_a_query_prometheus_rejects_raises_metrics_unavailable(prometheus_url):
    with pytest.raises(MetricsUnavailable, match="400"):
        range_series(prometheus_url, "sum(", NOW, NOW, 15)


def test_a_url_without_scheme_raises_metrics_unavailable():
    with pytest.raises(MetricsUnavailable, match="http"):
        latest_samples("127.0.0.1:9090")
