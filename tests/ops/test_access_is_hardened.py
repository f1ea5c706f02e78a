"""Access hardening: failed logins are throttled (django-axes), ``/metrics`` can require a
bearer token or a source network, ``/readyz`` names no cluster to an anonymous caller, and a
bidirectional-text override in cluster text is shown as ``[U+202E]`` on the pages."""

from __future__ import annotations

import pytest
from django.test import Client

from inventory.bidi import neutralize, neutralize_utf8
from inventory.models import Cluster, Node, SourceKind, SyncStatus
from inventory.ops_views import client_ip

pytestmark = pytest.mark.django_db

RLO_NAME = "gpu-node-7\u202e0fni"


def _login(client: Client, password: str, addr: str = "10.0.0.9"):
    return client.post("/login/", {"username": "viewer", "password": password}, REMOTE_ADDR=addr)


def test_the_sixth_wrong_password_is_refused_even_with_the_right_one(client, viewer, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "wrong").status_code == 200  # the form again, with its error
    assert _login(client, "wrong").status_code == 429  # the limit: locked out
    assert _login(client, "pw-viewer-1").status_code == 429  # the right password is refused too
    assert "_auth_user_id" not in client.session
    # Another client address is not locked out (the lock is per username and address).
    other = Client()
    assert _login(other, "pw-viewer-1", addr="10.0.0.10").status_code == 302


def test_a_success_resets_the_count(client, viewer, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "wrong")
    assert _login(client, "pw-viewer-1").status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "wrong").status_code == 200


def test_the_client_address_trusts_forwarded_for_only_from_configured_proxies(rf, settings):
    req = rf.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7")
    assert client_ip(req) == "10.1.1.1"
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_ip(req) == "203.0.113.7"  # the address our one proxy saw, not what the client wrote


def test_metrics_are_open_by_default(client):
    Cluster.objects.create(name="secret-cluster", source_kind=SourceKind.SNAPSHOT)
    resp = client.get("/metrics")
    assert resp.status_code == 200 and b"secret-cluster" in resp.content


def test_metrics_with_a_token_need_the_bearer_header(client, settings):
    settings.METRICS_TOKEN = "s3cr3t-token"
    Cluster.objects.create(name="secret-cluster", source_kind=SourceKind.SNAPSHOT)
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": "Basic s3cr3t-token"}):
        resp = client.get("/metrics", **headers)
        assert resp.status_code == 401 and b"secret-cluster" not in resp.content
        assert resp["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cr3t-token").status_code == 200


def test_metrics_token_file_is_read_at_each_scrape_and_an_unreadable_one_refuses(client, settings, tmp_path):
    token = tmp_path / "token"
    token.write_text("from-file\n")
    settings.METRICS_TOKEN_FILE = str(token)
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer from-file").status_code == 200
    token.write_text("rotated")
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer from-file").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer rotated").status_code == 200
    token.unlink()
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer rotated").status_code == 401


def test_metrics_allowlist_refuses_other_networks(client, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.42.0.0/16", "fd00::/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.42.3.4").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="fd00::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.5").status_code == 403
    # A forged X-Forwarded-For does not help without a trusted proxy.
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.5", HTTP_X_FORWARDED_FOR="10.42.3.4").status_code == 403


def test_readyz_names_no_cluster_to_an_anonymous_caller(client, client_in):
    Cluster.objects.create(name="prod-gpu-east", source_kind=SourceKind.SNAPSHOT, last_sync_status=SyncStatus.OK)
    anonymous = Client().get("/readyz")
    assert anonymous.status_code == 200 and b"prod-gpu-east" not in anonymous.content
    assert anonymous.json()["clusters_enabled"] == 1 and "clusters" not in anonymous.json()
    assert b"prod-gpu-east" in client_in.get("/readyz").content


def test_a_right_to_left_override_in_a_node_name_is_shown_not_obeyed(client_in):
    cluster = Cluster.objects.create(name="bidi", source_kind=SourceKind.SNAPSHOT)
    Node.objects.create(cluster=cluster, uid="uid-bidi", name=RLO_NAME, kubelet_version="v1.34.2\u2066x\u2069")
    page = client_in.get("/nodes/?cluster=bidi").content
    assert "\u202e".encode() not in page and "\u2066".encode() not in page
    assert b"gpu-node-7[U+202E]0fni" in page


def test_neutralize_replaces_every_control_and_nothing_else():
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    text = "a" + controls + "b ü 漢 \u200d"
    out = neutralize(text)
    assert out == "a" + "".join(f"[U+{ord(c):04X}]" for c in controls) + "b ü 漢 \u200d"
    assert neutralize_utf8(text.encode()) == out.encode()
    plain = "plain ü".encode()
    assert neutralize_utf8(plain) is plain


def test_authenticate_without_a_request_still_works_for_commands_and_scripts(viewer):
    from django.contrib.auth import authenticate

    assert authenticate(username="viewer", password="pw-viewer-1") == viewer
