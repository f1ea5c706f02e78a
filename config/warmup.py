"""Load what every web request needs before the first one arrives.

Django imports the URLconf (and with it every view, the API and its schema generator) and
compiles each template on first use, so the first visitor of a fresh web process waited for
all of it (the overview: about 0.6 s of a 0.6 s first request). The WSGI module calls
``warm()`` once at start-up, before the server accepts requests (gunicorn loads the
application first; its readiness probe passes only after). Set ``CLAIMSCOPE_WARM_WEB=0`` to
skip it (e.g. a one-off shell).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def _template_names() -> list[str]:
    from django.conf import settings

    names: list[str] = []
    for engine in settings.TEMPLATES:
        for folder in engine.get("DIRS", []):
            root = Path(folder)
            names += sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
    return names


def warm() -> None:
    """Import the URLconf (every view), build its reverse map and compile the project's
    templates into the cached template loader. A template that fails to compile is logged
    and left to fail on the request that uses it, as it would without warming."""
    if os.environ.get("CLAIMSCOPE_WARM_WEB", "1") == "0":
        return
    from django.template import TemplateSyntaxError
    from django.template.loader import get_template
    from django.urls import get_resolver

    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 - the import of every urls module and view is the point
    resolver.reverse_dict  # noqa: B018
    for name in _template_names():
        try:
            get_template(name)
        except TemplateSyntaxError:
            log.warning("template %s does not compile", name, exc_info=True)
