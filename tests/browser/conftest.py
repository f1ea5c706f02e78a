"""Headless Chromium (Debian's, driven by Playwright) against the live test server."""

from __future__ import annotations

import pytest

from tests.conftest import logged_in_page


@pytest.fixture
def demo_db(transactional_db):
    """The demo clusters, loaded through the real sync path."""
    from django.core.management import call_command

    call_command("load_demo", "--no-user")


@pytest.fixture
def page(browser, live_server, demo_db, django_user_model):
    django_user_model.objects.create_user("browser", password="browser-pw-1")
    context, pg = logged_in_page(browser, live_server.url, "browser", "browser-pw-1")
    yield pg
    context.close()
