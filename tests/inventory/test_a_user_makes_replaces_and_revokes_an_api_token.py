"""A logged-in user makes an API token for scripts on their own page, sees it once, replaces
it (the old key stops working) and revokes it."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
URL = reverse("inventory:api_token")


def _works(key: str) -> bool:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return c.get("/api/inventory/clusters/").status_code == 200


def test_make_see_once_replace_and_revoke(client_in, viewer):
    assert "You have no token" in client_in.get(URL).content.decode()
    resp = client_in.post(URL, {"action": "create"})
    first = Token.objects.get(user=viewer).key
    assert first in resp.content.decode() and _works(first)
    assert first not in client_in.get(URL).content.decode()  # shown only once
    client_in.post(URL, {"action": "create"})
    second = Token.objects.get(user=viewer).key
    assert second != first and _works(second) and not _works(first)
    client_in.post(URL, {"action": "revoke"})
    assert not Token.objects.filter(user=viewer).exists() and not _works(second)


def test_the_page_needs_a_login_and_a_csrf_token(client, viewer):
    assert client.get(URL).status_code == 302
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(viewer)
    assert strict.post(URL, {"action": "create"}).status_code == 403
    assert not Token.objects.filter(user=viewer).exists()
