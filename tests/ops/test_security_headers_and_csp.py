"""Pages carry security headers and a Content-Security-Policy that allows only local scripts."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _csp(resp) -> dict[str, list[str]]:
    policy = resp["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in policy.split(";")) if d}


@pytest.mark.parametrize("url", ["/login/", "/"])
def test_pages_carry_security_headers(client, viewer, url):
    client.force_login(viewer)
    resp = client.get(url)
    assert resp.status_code == 200
    assert resp["X-Content-Type-Options"] == "nosniff"
    assert resp["X-Frame-Options"] == "DENY"
    assert resp["Referrer-Policy"] == "same-origin"
    assert resp["Cross-Origin-Opener-Policy"] == "same-origin"


def test_csp_allows_only_same_origin_scripts_and_no_eval(client, viewer):
    client.force_login(viewer)
    csp = _csp(client.get("/"))
    assert csp["script-src"] == ["'self'"]
    assert csp["default-src"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'none'"] and csp["object-src"] == ["'none'"]
    assert csp["style-src"] == ["'self'", "'unsafe-inline'"]
    assert not any("*" in v or "http" in v for values in csp.values() for v in values)


def test_pages_have_no_inline_script_the_policy_would_block(client, viewer):
    """Every <script> either has a src or is a JSON data block, so script-src 'self' suffices."""
    import re

    client.force_login(viewer)
    html = client.get("/").content.decode()
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    assert "hx-on" not in html  # htmx evaluates hx-on attributes: that would need 'unsafe-eval'


def test_secure_cookie_flags_follow_debug(settings):
    from django.conf import settings as s

    assert s.DEBUG is False
    assert s.SESSION_COOKIE_SECURE and s.CSRF_COOKIE_SECURE and s.SESSION_COOKIE_HTTPONLY
