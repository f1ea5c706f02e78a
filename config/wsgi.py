"""WSGI entry point (gunicorn ``config.wsgi:application``): the application, warmed before
it serves its first request (``config.warmup``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

from config.warmup import warm  # noqa: E402 - needs the application's settings and apps

warm()
