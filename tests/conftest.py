"""Fixtures shared by every test package: real-data paths, logged-in clients, synced clusters."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
H100_SLICES = FIXTURES / "k8s/resourceslices/aicr-eks-2x8-h100-gpu-and-computedomain-slices.v1.yaml"
VKS_SLICES = FIXTURES / "k8s/resourceslices/vks-2x-grid-a100-10c-vgpu-gpu-slices.v1.yaml"
VKS_CLAIM = FIXTURES / "k8s/claims-with-status/vks-resourceclaim-allocated-reserved.v1.yaml"
CASES = FIXTURES / "cases"


def write_list(path: Path, objects: list) -> Path:
    """Write ``objects`` to ``path`` as one compact JSON ``kind: List`` (what ``kubectl get -o
    json`` and an API list page hold); returns ``path``."""
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")))
    return path


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("viewer", password="pw-viewer-1")


@pytest.fixture
def client_in(client, viewer):
    """A test client logged in as a plain user."""
    client.force_login(viewer)
    return client


@pytest.fixture
def sync_snapshot(db):
    """sync_snapshot(path, name) -> SyncRun: load a snapshot through the real sync path."""
    from inventory.models import Cluster
    from inventory.runs import after_read_hooks
    from inventory.sources import SnapshotSource
    from inventory.sync import sync_cluster

    def run(path, name="test", hooks=True):
        cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"snapshot_path": str(path)})
        return sync_cluster(cluster, SnapshotSource(path), after_read=after_read_hooks if hooks else None)

    return run


@pytest.fixture(autouse=True)
def _process_cache(settings):
    """Each test its own empty in-process cache (the embedded default is a folder shared by
    every process on the machine)."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": f"test-{os.getpid()}"}}
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    """Pages render without ``collectstatic`` in tests (no manifest needed)."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright (skipped when absent, unless required)."""
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


def logged_in_page(browser, base_url: str, username: str, password: str, width: int = 1400, height: int = 1000):
    """(context, page) logged in as ``username``; ``page.js_errors`` collects page errors and
    console errors (a CSP violation shows up there)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    login(page, base_url, username, password)
    page.js_errors = errors
    return context, page


def login(page, base_url: str, username: str, password: str) -> None:
    page.goto(base_url + "/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(base_url + "/")
