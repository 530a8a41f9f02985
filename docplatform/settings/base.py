"""The base: where the project's files are, DEBUG, the secret and encryption keys, the hosts
served, the installed apps, the middleware and the root URLconf.

With nothing set, the platform runs on its embedded default: SQLite and a Celery broker on the
file system, so it starts on a fresh machine with no server.
"""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from .environment import BASE_DIR, env, env_flag

# Runtime files of the embedded default (SQLite database, file-system broker).
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_flag("DEBUG", default=False)
# The development key is only for development (DEBUG on, as `make run` sets it); with DEBUG off
# the platform refuses to start without a SECRET_KEY of its own.
DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-change-me-in-production-0123456789"  # noqa: S105
SECRET_KEY = env.str("SECRET_KEY", default="")
if SECRET_KEY in ("", DEVELOPMENT_SECRET_KEY) and not DEBUG:
    raise ImproperlyConfigured(
        "SECRET_KEY is unset or the development key: set SECRET_KEY to a long random value "
        "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'), or DEBUG=true "
        "for development"
    )
SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Keys that encrypt secrets and credentials at rest (Fernet, comma-separated, newest first:
# older keys still decrypt, so a key can be rotated). Without one, a key is derived from
# SECRET_KEY in development (DEBUG on) only; `check --deploy` names a missing one.
ENCRYPTION_KEYS = env.list("ENCRYPTION_KEYS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "drf_standardized_errors",
    "axes",
    "csp",
    "docplatform",
    "integrations",
    "webhooks",
    "marketplace",
]

MIDDLEWARE = [
    # First: a request to the integrations host (INTEGRATIONS_URL) is answered by the public
    # endpoint views alone, and none of the middleware below runs for it.
    "integrations.middleware.IntegrationsOriginMiddleware",
    # Likewise for the published sites' host (SITES_URL): only the sites' pages answer there,
    # and no platform cookie is read or set.
    "docplatform.sites.middleware.SitesOriginMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "docplatform.api.errors.ApiNotFoundMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The request's address, for the audit log's rows (services never see the request).
    "docplatform.audit.context.AuditAddressMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "docplatform.content_policy.ContentPolicyMiddleware",
    # Last, as django-axes asks: it answers a locked-out login with the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "docplatform.urls"
WSGI_APPLICATION = "docplatform.wsgi.application"
