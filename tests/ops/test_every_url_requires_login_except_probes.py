"""Every URL the project serves sends anonymous users to a login page, except the probes,
/metrics and the login pages themselves; the JSON API under /api/ answers them 401 with the
token scheme (a script has no login page to go to). The URL list is walked from the resolver, so a page
added later is covered without editing this test."""

from __future__ import annotations

import itertools
import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.urls.exceptions import Resolver404
from django.utils.regex_helper import normalize

pytestmark = pytest.mark.django_db

PUBLIC = {"healthz", "readyz", "metrics", "login", "admin:login"}
API_NAMESPACES = ("inventory-api:", "claims-api:", "migration-api:", "api-")
CANDIDATES = ("1", "x", "auth", "inventory", "a/b")


def _leaves(patterns, prefix="", ns=""):
    for p in patterns:
        regex = prefix + p.pattern.regex.pattern.lstrip("^")
        if isinstance(p, URLResolver):
            child_ns = f"{ns}{p.namespace}:" if p.namespace else ns
            yield from _leaves(p.url_patterns, regex.rstrip("$").removesuffix(r"\Z"), child_ns)
        elif isinstance(p, URLPattern):
            yield regex, p, (ns + p.name) if p.name else None


def _concrete_url(regex: str, pattern: URLPattern) -> str | None:
    """A URL that resolves to ``pattern``'s view, with dummy path parameters."""
    for fmt, params in normalize(regex.replace(r"\Z", "$")):
        for values in itertools.product(CANDIDATES, repeat=len(params)):
            url = "/" + fmt % dict(zip(params, values, strict=True))
            try:
                match = resolve(url)
            except Resolver404:
                continue
            if match.func == pattern.callback or getattr(match.func, "view_class", 1) == getattr(
                pattern.callback, "view_class", 2
            ):
                return url
    return None


def all_urls() -> list[tuple[str, str | None]]:
    out = []
    for regex, pattern, name in _leaves(get_resolver().url_patterns):
        url = _concrete_url(regex, pattern)
        assert url is not None, f"could not build a URL for {regex!r} ({name})"
        out.append((url, name))
    return out


def test_the_walk_finds_the_pages_of_every_app():
    names = {n for _, n in all_urls()}
    for expected in ("inventory:overview", "inventory:device", "claims:list", "healthz", "metrics", "cluster_sync"):
        assert expected in names
    assert len(names) > 20


def test_anonymous_users_are_sent_to_login_from_every_page(client, sync_snapshot):
    from tests.conftest import VKS_CLAIM

    sync_snapshot(VKS_CLAIM, name="vks", hooks=False)  # real rows, so no page 404s by accident
    login, admin_login = reverse("login"), reverse("admin:login")
    checked = 0
    for url, name in all_urls():
        if name in PUBLIC:
            continue
        for method in (client.get, client.post):
            resp = method(url)
            if url.startswith("/api/"):
                assert (name or "").startswith(API_NAMESPACES), f"{url} ({name}) is under /api/ but not the API"
                assert resp.status_code == 401 and resp["WWW-Authenticate"] == "Token", f"{url} ({name})"
                checked += 1
                continue
            assert resp.status_code == 302, f"{method.__name__.upper()} {url} ({name}) -> {resp.status_code}"
            target = resp["Location"].split("?")[0]
            assert target in (login, admin_login), f"{url} ({name}) redirects to {target}"
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("url", ["/healthz", "/readyz", "/metrics", "/login/"])
def test_probes_metrics_and_login_answer_without_a_session(client, url):
    assert client.get(url).status_code == 200


def test_public_pages_are_only_the_listed_ones():
    names = {n for _, n in all_urls()}
    assert {"healthz", "readyz", "metrics", "login"} <= names
    assert not any(re.search(r"oidc", n or "") for n in names), "OIDC URLs exist only when OIDC is configured"
