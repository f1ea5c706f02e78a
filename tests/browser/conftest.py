"""Headless Chromium (Debian's, driven by Playwright) against the live test server."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CLAIMSCOPE_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is required (CLAIMSCOPE_REQUIRE_BROWSER=1) but not installed")
        pytest.skip("Debian chromium is not installed")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


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
    pg.goto(live_server.url + "/login/")
    pg.fill("input[name=username]", "browser")
    pg.fill("input[name=password]", "browser-pw-1")
    pg.click("button[type=submit]")
    pg.wait_for_url(live_server.url + "/")
    pg.js_errors = errors
    yield pg
    context.close()
