"""Single sign-on: off by default; with OIDC_RP_CLIENT_ID and the provider endpoints set, the
login page links to it and the OIDC views are reachable without a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_login_page_offers_no_sso_by_default(client):
    resp = client.get("/login/")
    assert resp.context["oidc_enabled"] is False
    assert "single sign-on" not in resp.content.decode()


def test_with_oidc_env_the_login_page_links_to_the_provider(tmp_path):
    secret_file = tmp_path / "oidc-secret"
    secret_file.write_text("s3cret-from-file\n")
    code = (
        "import django, json; django.setup()\n"
        "from django.conf import settings\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', verbosity=0)  # the OIDC view keeps its state in the session\n"
        "from django.test import Client\n"
        "from django.urls import reverse\n"
        "c = Client()\n"
        "login = c.get('/login/').content.decode()\n"
        "init = c.get(reverse('oidc_authentication_init'))\n"
        "print(json.dumps({'link': reverse('oidc_authentication_init') in login,\n"
        "  'init_status': init.status_code, 'init_location': init['Location'],\n"
        "  'secret': settings.OIDC_RP_CLIENT_SECRET, 'backends': settings.AUTHENTICATION_BACKENDS}))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CLAIMSCOPE_ENV_FILE": "/nonexistent",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SECRET_KEY": "k" * 60,
        "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
        "OIDC_RP_CLIENT_ID": "claimscope",
        "OIDC_RP_CLIENT_SECRET_FILE": str(secret_file),
        "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://idp.example.com/authorize",
        "OIDC_OP_TOKEN_ENDPOINT": "https://idp.example.com/token",
        "OIDC_OP_USER_ENDPOINT": "https://idp.example.com/userinfo",
        "OIDC_OP_JWKS_ENDPOINT": "https://idp.example.com/jwks",
    }
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["link"] is True
    # Not bounced to the login page: the view redirects to the provider with our client id.
    assert got["init_status"] == 302
    assert got["init_location"].startswith("https://idp.example.com/authorize?") and "client_id=claimscope" in got["init_location"]
    assert got["secret"] == "s3cret-from-file"
    # django-axes' backend comes first (it only refuses locked-out clients), then single sign-on.
    assert got["backends"][:2] == ["inventory.ops_views.LoginThrottleBackend", "mozilla_django_oidc.auth.OIDCAuthenticationBackend"]
