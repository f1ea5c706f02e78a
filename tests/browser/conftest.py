"""Headless Chromium (Debian's, driven by Playwright) against the live test server."""

from __future__ import annotations

import pytest

from tests.conftest import login


@pytest.fixture
def demo_db(transactional_db):
    """The demo clusters, loaded through the real sync path."""
    from django.core.management import call_command

    call_command("load_demo", "--no-user")


@pytest.fixture
def page(browser, live_server, demo_db, django_user_model):
    django_user_model.objects.create_user("browser", password="browser-pw-1")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    login(pg, live_server.url, "browser", "browser-pw-1")
    pg.js_errors = errors
    yield pg
    context.close()
