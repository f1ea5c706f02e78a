"""The Django project. The Celery app (``config.celery``) is loaded by the tasks modules that bind to
it and by ``celery -A config``, not here: a management command that reads a snapshot never
imports Celery."""
