"""The WSGI module warms the application before the server accepts requests: every URL
module and view imported, the project's templates compiled into the cached loader, so the
first visitor of a fresh web process does not wait for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys
import config.wsgi
from django.template import engines
from django.template.loaders.cached import Loader as Cached

def cached(loaders):
    for loader in loaders:
        if isinstance(loader, Cached):
            return len(loader.get_template_cache)
        n = cached(getattr(loader, "loaders", []))
        if n is not None:
            return n

print(cached(engines["django"].engine.template_loaders), "claims.views" in sys.modules, "inventory.views" in sys.modules)
"""


def _probe(env_extra):
    import os

    env = {**os.environ, **env_extra, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    compiled, claims_views, inventory_views = out.stdout.split()
    return int(compiled), claims_views == "True", inventory_views == "True"


def test_loading_the_wsgi_module_imports_the_views_and_compiles_every_template():
    compiled, claims_views, inventory_views = _probe({})
    templates = len(list((ROOT / "templates").rglob("*.html")))
    assert claims_views and inventory_views
    assert compiled >= templates


def test_warming_can_be_switched_off():
    compiled, claims_views, _ = _probe({"CLAIMSCOPE_WARM_WEB": "0"})
    assert compiled == 0 and not claims_views
