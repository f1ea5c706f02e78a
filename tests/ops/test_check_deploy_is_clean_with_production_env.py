"""``manage.py check --deploy`` reports nothing with the settings a production deployment sets."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "claimscope.example.com",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
}


def _check(extra: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    key_file = tmp_path / "secret-key"
    key_file.write_text(secrets.token_urlsafe(60))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "SESSION_", "CSRF_"))}
    env.update({"CLAIMSCOPE_ENV_FILE": "/nonexistent", "SECRET_KEY_FILE": str(key_file), "DEBUG": "0", **extra})
    env.pop("SECRET_KEY", None)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests of this session only
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_check_deploy_has_no_warnings_with_production_settings(tmp_path):
    out = _check(PRODUCTION, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout


def test_check_deploy_complains_when_hsts_is_left_out(tmp_path):
    """The test above can fail: without HSTS the deploy check warns."""
    out = _check({**PRODUCTION, "SECURE_HSTS_SECONDS": "0"}, tmp_path)
    assert out.returncode != 0 and "security.W004" in out.stdout + out.stderr
