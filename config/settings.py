"""Claimscope settings: everything comes from the environment (django-environ).

Defaults give the embedded mode: SQLite file under ``var/``, Celery tasks run eagerly
(no Redis), DEBUG off unless asked. Secrets may come from files: ``NAME_FILE`` wins over
``NAME`` for SECRET_KEY, DATABASE_URL and OIDC_RP_CLIENT_SECRET.
"""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
environ.Env.read_env(env.str("CLAIMSCOPE_ENV_FILE", default=str(BASE_DIR / ".env")))


def secret(name: str, default: str | None = None) -> str | None:
    """Read ``NAME_FILE`` (a path, e.g. a mounted Kubernetes Secret) or else ``NAME``."""
    path = env.str(f"{name}_FILE", default="")
    if path:
        return Path(path).read_text(encoding="utf-8").strip()
    return env.str(name, default=default)


DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = secret("SECRET_KEY", "insecure-embedded-demo-key-change-me" if DEBUG else None)
if not SECRET_KEY:
    # Embedded default: a per-install key kept under var/, never committed.
    _key_file = BASE_DIR / "var" / "secret_key"
    if not _key_file.exists():
        import secrets as _secrets

        _key_file.parent.mkdir(parents=True, exist_ok=True)
        _key_file.write_text(_secrets.token_urlsafe(50))
    SECRET_KEY = _key_file.read_text().strip()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "django_filters",
    "django_tables2",
    "template_partials",
    "inventory",
    "claims",
    "migration",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "inventory.context_processors.clusters",
            ],
        },
    },
]
WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": env.db_url_config(
        secret("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'claimscope.sqlite3'}")
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
import plotly as _plotly  # noqa: E402 - plotly.js ships inside the plotly package; served locally

STATICFILES_DIRS = [BASE_DIR / "static", ("vendor/plotly", Path(_plotly.__file__).parent / "package_data")]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env.str(
            "STATICFILES_BACKEND",
            default="whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG
            else "django.contrib.staticfiles.storage.StaticFilesStorage",
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# Celery: unset broker = eager mode, so the embedded default needs no Redis.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=None)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
# Beat ticks a dispatcher; it enqueues one sync task per cluster whose own interval is due.
CELERY_BEAT_SCHEDULE = {
    "dispatch-due-syncs": {"task": "inventory.dispatch_due_syncs", "schedule": 10.0},
}

# How to reach clusters when a Cluster row does not say: kubeconfig path/context or in-cluster.
KUBECONFIG = env.str("KUBECONFIG", default="")
KUBE_CONTEXT = env.str("KUBE_CONTEXT", default="")
KUBE_IN_CLUSTER = env.bool("KUBE_IN_CLUSTER", default=False)
KUBE_PAGE_SIZE = env.int("KUBE_PAGE_SIZE", default=500)
KUBE_REQUEST_TIMEOUT = env.float("KUBE_REQUEST_TIMEOUT", default=30.0)
SYNC_INTERVAL_SECONDS = env.int("SYNC_INTERVAL_SECONDS", default=30)

# Prometheus with DCGM exporter series; empty = telemetry from snapshots only.
PROMETHEUS_URL = env.str("PROMETHEUS_URL", default="")
PROMETHEUS_TIMEOUT = env.float("PROMETHEUS_TIMEOUT", default=5.0)

# Diagnosis thresholds (seconds).
DIAGNOSIS_PENDING_SECONDS = env.int("DIAGNOSIS_PENDING_SECONDS", default=300)
DIAGNOSIS_ALLOCATED_NOT_RESERVED_SECONDS = env.int(
    "DIAGNOSIS_ALLOCATED_NOT_RESERVED_SECONDS", default=300
)
DIAGNOSIS_DELETING_SECONDS = env.int("DIAGNOSIS_DELETING_SECONDS", default=300)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
