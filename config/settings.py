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
    "claims.ledger",  # chargeback ledger (label "chargeback", its own migrations)
    "migration",
    "devtools",  # dev commands (demo, fleet, benchmark); product apps never import it
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
                "claims.context_processors.stuck",
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
    # WAL lets the dashboard read while a worker syncs; NORMAL is durable with WAL. A new
    # database gets 32 KiB pages (the size must be set before WAL): objects' raw JSON runs to
    # tens of KB, and with 4 KiB pages each spilled into a chain of overflow pages (a full
    # sync of 1,000 nodes measured 1.50 s with 4 KiB pages, 1.39 s with 32 KiB).
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA page_size=32768; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
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

# Shared by web and workers (e.g. redis://redis:6379/1 in production): the sync warms the
# overview aggregates there, so no page pays for them. The embedded default is a folder
# beside the SQLite file, shared by every process on this machine (a per-process memory
# cache made each fresh web process compute them again: seconds at 1,000 nodes).
CACHES = {"default": env.cache_url("CACHE_URL", default=f"filecache://{BASE_DIR / 'var' / 'cache'}")}

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=None)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
# Beat ticks a dispatcher; it enqueues one sync task per cluster whose own interval is due.
CELERY_BEAT_SCHEDULE = {
    "dispatch-due-syncs": {"task": "inventory.dispatch_due_syncs", "schedule": 10.0},
    # Latest DCGM values from each cluster's Prometheus (history stays in Prometheus).
    "dispatch-metric-polls": {"task": "inventory.dispatch_metric_polls", "schedule": 30.0},
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
# A live cluster whose sync changed nothing is re-diagnosed at most this often.
ANALYSIS_REFRESH_SECONDS = env.int("ANALYSIS_REFRESH_SECONDS", default=60)

# Live reads (inventory/watch.py, kubehttp.py, locks.py; docs/architecture.md "Live clusters").
KUBE_WATCH_SECONDS = env.float("KUBE_WATCH_SECONDS", default=5)  # how long a poll's watches run
KUBE_RELIST_SECONDS = env.float("KUBE_RELIST_SECONDS", default=3600)  # a full list at least this often
# The whole read, under the task's soft limit; retries per request and their time budget.
KUBE_READ_DEADLINE_SECONDS = env.float("KUBE_READ_DEADLINE_SECONDS", default=200)
KUBE_RETRY_ATTEMPTS = env.int("KUBE_RETRY_ATTEMPTS", default=4)
KUBE_RETRY_SECONDS = env.float("KUBE_RETRY_SECONDS", default=60)
# One sync per cluster: a second waits this long, then refuses; a lease outlives a dead holder by this.
SYNC_LOCK_WAIT_SECONDS = env.float("SYNC_LOCK_WAIT_SECONDS", default=5)
SYNC_LEASE_SECONDS = env.float("SYNC_LEASE_SECONDS", default=CELERY_TASK_TIME_LIMIT + 60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

# --- Chargeback (docs/chargeback.md) -----------------------------------------------------
# Price per whole-GPU-hour by GPU product (the devices' productName), JSON; "*" for any other
# product, e.g. {"NVIDIA H100 80GB HBM3": 2.5, "*": 1.0}. Products without a price have no cost.
CLAIMSCOPE_CHARGEBACK_PRICES = env.json("CLAIMSCOPE_CHARGEBACK_PRICES", default={})
CLAIMSCOPE_CHARGEBACK_CURRENCY = env.str("CLAIMSCOPE_CHARGEBACK_CURRENCY", default="USD")
# Namespace label or annotation key naming a namespace's team ("" = no team column).
CLAIMSCOPE_CHARGEBACK_TEAM_LABEL = env.str("CLAIMSCOPE_CHARGEBACK_TEAM_LABEL", default="")
# Namespace -> team, JSON, for namespaces without that label (Namespace objects are not read yet).
CLAIMSCOPE_CHARGEBACK_TEAMS = env.json("CLAIMSCOPE_CHARGEBACK_TEAMS", default={})

# Days a readiness attestation (someone's word for a checklist item) stays valid.
READINESS_ATTESTATION_DAYS = env.int("READINESS_ATTESTATION_DAYS", default=90)

# --- Operations: health, security headers, CSP, single sign-on ---------------------------
# Readiness (/readyz) fails when every enabled cluster's last sync is older than this; 0 = off.
READY_MAX_SYNC_AGE_SECONDS = env.int("READY_MAX_SYNC_AGE_SECONDS", default=900)

# Cookies are Secure whenever DEBUG is off (browsers accept them on http://localhost too);
# plain http on another host name needs SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0.
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# Behind a TLS-terminating proxy the redirect is the proxy's job, hence default off.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
# e.g. SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https -- only if the proxy always sets it.
_proxy_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_header:
    SECURE_PROXY_SSL_HEADER = (_proxy_header[0], _proxy_header[1])
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp). Everything is served from 'self' (no CDN). Checked in
# headless Chromium: htmx 2 (no hx-on) and plotly.js scatter/bar/heatmap run without
# 'unsafe-eval' (only plotly's WebGL traces would need it); inline styles are used by
# templates, htmx indicators and plotly, so style-src allows 'unsafe-inline'. No inline scripts.
INSTALLED_APPS.append("csp")
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
if env.str("CSP_REPORT_URI", default=""):
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["report-uri"] = [env.str("CSP_REPORT_URI")]

TEMPLATES[0]["OPTIONS"]["context_processors"].append("inventory.ops_views.auth_options")

# Optional OpenID Connect login (mozilla-django-oidc), on only when OIDC_RP_CLIENT_ID is set.
OIDC_RP_CLIENT_ID = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
if OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS = [
        "mozilla_django_oidc.auth.OIDCAuthenticationBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    OIDC_RP_CLIENT_SECRET = secret("OIDC_RP_CLIENT_SECRET", "")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT")
    OIDC_OP_TOKEN_ENDPOINT = env.str("OIDC_OP_TOKEN_ENDPOINT")
    OIDC_OP_USER_ENDPOINT = env.str("OIDC_OP_USER_ENDPOINT")
    OIDC_OP_JWKS_ENDPOINT = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
    OIDC_RP_SIGN_ALGO = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
    OIDC_RP_SCOPES = env.str("OIDC_RP_SCOPES", default="openid email profile")
    OIDC_CREATE_USER = env.bool("OIDC_CREATE_USER", default=True)
    LOGIN_REDIRECT_URL_FAILURE = "/login/"

# --- The read-only JSON API under /api/ (Django REST framework; OpenAPI at /api/schema/) ----
# Same permissions as the pages: any logged-in user reads. Scripts send "Authorization: Token
# <key>" (manage.py drf_create_token <user>); the browser's session works too.
INSTALLED_APPS += ["rest_framework", "rest_framework.authtoken", "drf_spectacular"]
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["inventory.api.filtering.StrictFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "inventory.api.pagination.Pagination",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
    "DEFAULT_SCHEMA_CLASS": "inventory.api.schema.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Claimscope API",
    "DESCRIPTION": "Read-only: DRA GPU inventory, ResourceClaims, diagnosis findings, readiness, migration plan.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}

# --- Access hardening (docs/deploy.md "Access") ---------------------------------------------
# Your proxies in front of the web pods (an ingress controller: 1). 0 trusts no
# X-Forwarded-For: the client is REMOTE_ADDR (inventory.ops_views.client_ip).
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# Login throttling (django-axes): AXES_FAILURE_LIMIT failed logins for one username from one
# client address lock that pair out for AXES_COOLOFF_MINUTES (HTTP 429); a success resets it.
INSTALLED_APPS.append("axes")
MIDDLEWARE.append("axes.middleware.AxesMiddleware")
AUTHENTICATION_BACKENDS = [
    "inventory.ops_views.LoginThrottleBackend",  # django-axes' backend, tolerant of request=None
    *globals().get("AUTHENTICATION_BACKENDS", ["django.contrib.auth.backends.ModelBackend"]),
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_MINUTES", default=15.0) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "inventory.ops_views.client_ip"
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_VERBOSE = False  # no start-up banner in every command's output
# /metrics: open unless a bearer token (METRICS_TOKEN or METRICS_TOKEN_FILE) and/or a network
# allowlist (METRICS_ALLOWED_NETWORKS, CIDRs, comma-separated) is set (inventory.ops_views.metrics_gate).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_TOKEN_FILE = env.str("METRICS_TOKEN_FILE", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
# Bidirectional-text controls in cluster text are shown as [U+202E] on every HTML page.
MIDDLEWARE.insert(0, "inventory.bidi.BidiNeutralizingMiddleware")
