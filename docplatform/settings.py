"""Settings, read from the environment (and an optional ``.env`` beside manage.py).

With nothing set, the platform runs on its embedded default: SQLite and a Celery broker on the
file system, so it starts on a fresh machine with no server. ``DATABASE_URL`` selects
PostgreSQL (psycopg 3) and ``CELERY_BROKER_URL`` selects Redis or RabbitMQ.
"""

import ipaddress
import math
import os
import re
import warnings
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured
from dotenv import dotenv_values

BASE_DIR = Path(__file__).resolve().parent.parent

# The optional .env feeds these settings only: it is not copied into os.environ, so it never
# leaks into what integration secrets are resolved from. The process environment wins.
env = environ.Env()
env.ENVIRON = {**dotenv_values(BASE_DIR / ".env"), **os.environ}


def env_positive(cast, name: str, default):
    """A setting that must be a number above zero; anything else stops start-up with an
    error naming the variable."""
    raw = env.ENVIRON.get(name)
    try:
        value = default if raw is None else cast(raw)
    except ValueError:
        value = None
    if value is None or not 0 < value < math.inf:
        raise ImproperlyConfigured(f"{name} must be a number above 0, not {raw!r}")
    return value


def env_number(cast, name: str, default, *, minimum=0):
    """A number setting of at least ``minimum`` (0 allowed by default); anything else stops
    start-up with an error naming the variable and what it must be."""
    raw = env.ENVIRON.get(name)
    try:
        value = default if raw is None else cast(raw)
    except ValueError:
        value = None
    if value is None or not minimum <= value < math.inf:
        kind = "a whole number" if cast is int else "a number"
        raise ImproperlyConfigured(f"{name} must be {kind} of at least {minimum}, not {raw!r}")
    return value


BOOLEANS = {"true": True, "yes": True, "on": True, "1": True}
BOOLEANS |= {"false": False, "no": False, "off": False, "0": False}


def env_flag(name: str, default: bool) -> bool:
    """A yes/no setting (unset or empty: ``default``); anything else stops start-up, where
    django-environ would read it as false."""
    raw = env.ENVIRON.get(name)
    if raw is None or not raw.strip():
        return default
    if raw.strip().lower() not in BOOLEANS:
        raise ImproperlyConfigured(
            f"{name} must be true or false (yes/no, on/off, 1/0), not {raw!r}"
        )
    return BOOLEANS[raw.strip().lower()]


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (case-insensitive); anything else stops start-up naming them."""
    raw = env.ENVIRON.get(name)
    if raw is None:
        return default
    if raw.strip().upper() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {raw!r}")
    return raw.strip().upper()


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DATABASE_ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")


def env_database(name: str, default: str) -> dict:
    """A database URL for PostgreSQL or SQLite, as Django's DATABASES entry; anything else
    stops start-up naming the variable (the value is shown without its password)."""
    raw = env.ENVIRON.get(name, default)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # django-environ warns, then returns no ENGINE
        try:
            config = environ.Env.db_url_config(raw)
        except ValueError:  # e.g. a port that is not a number
            config = {}
    if config.get("ENGINE") not in DATABASE_ENGINES:
        shown = re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", raw)
        raise ImproperlyConfigured(
            f"{name} must be a database URL, postgres://USER:PASSWORD@HOST:PORT/NAME or "
            f"sqlite:///PATH, not {shown!r}"
        )
    return config


def env_networks(name: str) -> list[str]:
    """Comma-separated CIDRs; one that is not a network stops start-up naming it."""
    cidrs = env.list(name, default=[])
    for cidr in cidrs:
        try:
            ipaddress.ip_network(cidr.strip(), strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated networks such as 127.0.0.0/8,::1/128: "
                f"{cidr.strip()!r} is not a network (CIDR)"
            ) from None
    return cidrs


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
    "docplatform.api_errors.ApiNotFoundMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it answers a locked-out login with the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "docplatform.urls"
WSGI_APPLICATION = "docplatform.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env_database("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web and worker processes share one SQLite file;
    # IMMEDIATE transactions take the write lock up front instead of failing mid-way.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )
else:
    # Connections outlive a request or a task: a new PostgreSQL backend costs milliseconds
    # of CPU on both sides. A broken one is replaced at the next request or task.
    DATABASES["default"]["CONN_MAX_AGE"] = env_number(int, "DATABASE_CONN_MAX_AGE", 300)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
#: The hot paths' compiled statements (docplatform.queries) run as prepared statements on
#: PostgreSQL; off behind a pooler that does not keep them (PgBouncer before 1.21 in
#: transaction mode).
DATABASE_PREPARED_STATEMENTS = env_flag("DATABASE_PREPARED_STATEMENTS", True)
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
# WhiteNoise serves static files straight from the apps, so no collectstatic is needed to run.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", LOG_LEVELS, "INFO")},
}

# --- REST API -------------------------------------------------------------------------------
# How many reverse proxies in front of the platform append to X-Forwarded-For. With 0 (the
# default) the header is ignored and the client address is REMOTE_ADDR, so nobody can forge
# the address the beacon records or the throttles count.
TRUSTED_PROXY_COUNT = env_number(int, "TRUSTED_PROXY_COUNT", 0)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Plug-in apps' own tokens first; a bearer token none of them takes is refused by
        # the personal-token authentication.
        "integrations.authentication.InstallationTokenAuthentication",
        "docplatform.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["docplatform.api_permissions.IsPerson"],
    "DEFAULT_PARSER_CLASSES": ["docplatform.api_inputs.SafeJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "docplatform.api_inputs.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="120/minute"),
        "user": env.str("API_THROTTLE_USER", default="1200/minute"),
    },
    "DEFAULT_SCHEMA_CLASS": "docplatform.api_schema.AutoSchema",
    "EXCEPTION_HANDLER": "drf_standardized_errors.handler.exception_handler",
}
DRF_STANDARDIZED_ERRORS = {
    "ENABLE_IN_DEBUG_FOR_UNHANDLED_EXCEPTIONS": True,
    "EXCEPTION_HANDLER_CLASS": "docplatform.api_errors.ApiExceptionHandler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Documentation platform API",
    "DESCRIPTION": "Organizations, spaces, sites, integrations, installations and events.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files come from the sidecar package, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Stable names for the error shapes' enums (drf-standardized-errors' recommendation).
    "ENUM_NAME_OVERRIDES": {
        name: f"drf_standardized_errors.openapi_serializers.{name}.choices"
        for name in [
            "ValidationErrorEnum",
            "ClientErrorEnum",
            "ServerErrorEnum",
            *(f"ErrorCode{code}Enum" for code in (401, 403, 404, 405, 406, 415, 429, 500)),
        ]
    }
    | {
        "SpaceVisibilityEnum": "docplatform.models.Space.Visibility",
        "IntegrationVisibilityEnum": "integrations.models.Integration.Visibility",
        "InstallationStatusEnum": "integrations.models.Installation.Status",
        "DeliveryStatusEnum": "docplatform.events.models.Delivery.Status",
        "ApiTokenStatusEnum": "docplatform.api_tokens.TOKEN_STATUSES",
        "EventTypeWhereEnum": "docplatform.api_event_types.WHERE",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_standardized_errors.openapi_hooks.postprocess_schema_enums",
        "docplatform.api_schema.postprocess_error_attrs",
        "docplatform.api_schema.postprocess_tags",
        "docplatform.api_event_types.postprocess_event_schemas",
    ],
}

# --- Celery ---------------------------------------------------------------------------------
# The embedded default is kombu's file-system transport: no server, and it works across
# processes (web and worker), unlike memory://.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT = "docplatform.broker:Transport"  # atomic message files
    _broker_dir = VAR_DIR / "broker"
    (_broker_dir / "queue").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": 0.05,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# A broker that is down, or that accepts connections and never answers, must not hold a
# request: each try of a publish gives up after this many seconds (connecting, and each read
# or write), with one retry (a pooled connection the broker dropped reconnects); what could
# not be sent is the sweeper's. After a failure a process publishes nothing for
# BROKER_BACKOFF_SECONDS (docplatform/events/publisher.py).
BROKER_TIMEOUT_SECONDS = env_positive(float, "BROKER_TIMEOUT_SECONDS", 1.0)
BROKER_BACKOFF_SECONDS = env_number(float, "BROKER_BACKOFF_SECONDS", 5.0)
if CELERY_BROKER_URL.split(":", 1)[0] in ("redis", "rediss", "sentinel"):
    CELERY_BROKER_TRANSPORT_OPTIONS |= {
        "socket_connect_timeout": BROKER_TIMEOUT_SECONDS,
        "socket_timeout": BROKER_TIMEOUT_SECONDS,
    }
elif CELERY_BROKER_URL.split(":", 1)[0] in ("amqp", "amqps", "pyamqp"):
    # The handshake is bounded by CELERY_BROKER_CONNECTION_TIMEOUT, a publish's write here.
    CELERY_BROKER_TRANSPORT_OPTIONS |= {"write_timeout": BROKER_TIMEOUT_SECONDS}
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_TIMEOUT_SECONDS
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Webhook deliveries and runtime calls wait on the network: each has a queue of its own, so
# a slow receiver or integration never holds up the outbox's bookkeeping on `default`.
CELERY_TASK_ROUTES = {
    "webhooks.tasks.deliver": {"queue": "webhooks"},
    "webhooks.tasks.deliver_due": {"queue": "webhooks"},
    "integrations.tasks.run_delivery": {"queue": "runtime"},
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {}
# Queues a worker consumes when started by the run command.
CELERY_WORKER_QUEUES = ["default", "webhooks", "runtime"]

# --- Event deliveries (the outbox) --------------------------------------------------------------
# Check every fired payload against its event type's JSON Schema (docplatform.events.schemas):
# on in the tests and with DEBUG, off in production (a wrong payload is a bug to find there).
EVENT_PAYLOAD_CHECKS = env_flag("EVENT_PAYLOAD_CHECKS", default=DEBUG)
# Up to this many deliveries of one event are queued straight after commit; more go through
# one fan-out task, so firing an event costs the same whatever its audience.
DELIVERY_INLINE_FANOUT = env_number(int, "DELIVERY_INLINE_FANOUT", 50)
# A worker's hold on a delivery; longer than any attempt, short enough to recover a killed
# worker's delivery within a minute.
DELIVERY_LEASE_SECONDS = env_positive(int, "DELIVERY_LEASE_SECONDS", 40)
# The sweeper re-queues open deliveries left unqueued or unclaimed for longer than this.
DELIVERY_SWEEP_GRACE_SECONDS = env_number(int, "DELIVERY_SWEEP_GRACE_SECONDS", 10)
DELIVERY_SWEEP_BATCH = 1000
CELERY_BEAT_SCHEDULE["sweep-deliveries"] = {
    "task": "docplatform.tasks.sweep_deliveries",
    "schedule": env_positive(float, "DELIVERY_SWEEP_INTERVAL_SECONDS", 10.0),
}
# The reader's record of when each visitor last fired space_view in a space (kept 5 minutes
# at least): older rows are purged this often.
CELERY_BEAT_SCHEDULE["purge-space-visits"] = {
    "task": "docplatform.tasks.purge_space_visits",
    "schedule": 3600.0,
}
# Likewise the published sites' record of each visitor's last site_view per page (1 minute).
CELERY_BEAT_SCHEDULE["purge-site-visits"] = {
    "task": "docplatform.tasks.purge_site_visits",
    "schedule": 3600.0,
}
# Celery's Django fix-up closes the database connections around every task unless this is
# set; then it closes them every this many tasks, and docplatform.celery drops a connection
# that broke or outlived CONN_MAX_AGE before each task.
CELERY_DB_REUSE_MAX = env_positive(int, "CELERY_DB_REUSE_MAX", 1000)

# --- Webhooks -----------------------------------------------------------------------------------
# The base of the retry schedule: retries after 1x, 2x and 4x this, each +/-10 %.
WEBHOOK_RETRY_BASE_DELAY = env_number(float, "WEBHOOK_RETRY_BASE_DELAY", 1.0)
WEBHOOK_CONNECT_TIMEOUT = env_positive(float, "WEBHOOK_CONNECT_TIMEOUT", 3.0)
WEBHOOK_RESPONSE_TIMEOUT = env_positive(float, "WEBHOOK_RESPONSE_TIMEOUT", 10.0)
# Fresh deliveries go out in batches (a drain task claims up to this many at once and POSTs
# them concurrently); a drain hands over to a new one after this many seconds.
WEBHOOK_BATCH_SIZE = env_positive(int, "WEBHOOK_BATCH_SIZE", 25)
WEBHOOK_DRAIN_SECONDS = env_positive(float, "WEBHOOK_DRAIN_SECONDS", 20.0)
# Drains sharing a backlog, at most (each in a worker slot of its own).
WEBHOOK_PARALLEL_DRAINS = env_positive(int, "WEBHOOK_PARALLEL_DRAINS", 4)
# POSTs in flight per worker process, at most. At least WEBHOOK_PARALLEL_DRAINS times
# WEBHOOK_BATCH_SIZE, so a batch never waits behind another batch's slow receivers.
WEBHOOK_SENDERS = env_positive(int, "WEBHOOK_SENDERS", 200)
# POSTs in flight to one receiver (host:port) per worker process, at most: a burst to one slow
# URL takes no more senders than this; what is over it waits (postponed), it does not fail.
WEBHOOK_RECEIVER_CONCURRENCY = env_positive(int, "WEBHOOK_RECEIVER_CONCURRENCY", 10)
# CIDRs that webhook URLs may reach although they are not public (development, tests).
WEBHOOK_ALLOWED_NETWORKS = env_networks("WEBHOOK_ALLOWED_NETWORKS")
WEBHOOK_RETENTION_DAYS = env_positive(int, "WEBHOOK_RETENTION_DAYS", 30)
CELERY_BEAT_SCHEDULE["purge-webhook-deliveries"] = {
    "task": "webhooks.tasks.purge_deliveries",
    "schedule": 3600.0,
}
# An endpoint whose every attempt failed for this many days is disabled (its admins see why
# and re-enable it in one click); the check runs this often (seconds).
WEBHOOK_DISABLE_AFTER_DAYS = env_positive(float, "WEBHOOK_DISABLE_AFTER_DAYS", 3.0)
CELERY_BEAT_SCHEDULE["disable-failing-webhook-endpoints"] = {
    "task": "webhooks.tasks.disable_failing_endpoints",
    "schedule": env_positive(float, "WEBHOOK_DISABLE_CHECK_INTERVAL_SECONDS", 3600.0),
}
# "Resend all failed since ..." sends at most this many deliveries again per request.
WEBHOOK_BULK_REDELIVERY_LIMIT = env_positive(int, "WEBHOOK_BULK_REDELIVERY_LIMIT", 1000)

# --- The integration runtime ---------------------------------------------------------------------
# Where the platform is reached from outside (the API endpoint and installations' public
# endpoints given to integration code) and where the runtime host listens.
PLATFORM_URL = env.str("PLATFORM_URL", default="http://127.0.0.1:8000").rstrip("/")
# The origin of the integrations' public endpoints (DESIGN.md, "Trust boundaries" 3): another
# host than the platform's, so no platform cookie reaches integration code and nothing it
# answers runs on, or sets cookies for, the platform's origin. One process serves both hosts.
INTEGRATIONS_URL = env.str("INTEGRATIONS_URL", default="http://localhost:8000").rstrip("/")


def origin_host(name: str, url: str) -> str:
    """The host of a ``scheme://host[:port]`` setting; anything else stops start-up."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ImproperlyConfigured(f"{name} must be http(s)://host[:port], not {url!r}")
    return parts.hostname.rstrip(".").lower()


def check_separate_origins(name: str, url: str, *others: str, production: bool) -> None:
    """The host of setting ``name`` must not be the host of any setting in ``others``; in
    production not a parent or a child domain of it either (a cookie set for one with
    ``Domain=`` would reach the other)."""
    host = origin_host(name, url)
    for other in others:
        other_url = globals()[other]
        other_host = origin_host(other, other_url)
        related = host.endswith("." + other_host) or other_host.endswith("." + host)
        if host == other_host or (production and related):
            raise ImproperlyConfigured(
                f"{name} ({url}) must be on another domain than {other} ({other_url}): not "
                "the same host, nor a parent or child domain of it"
            )


check_separate_origins("INTEGRATIONS_URL", INTEGRATIONS_URL, "PLATFORM_URL", production=not DEBUG)
# The origin of published sites (DESIGN.md, "The documentation product"): anonymous visitors,
# the site's own visitor cookie, nothing of the platform's. Another host than the platform's
# and the integrations' (development: another loopback address, which `make run` also serves).
SITES_URL = env.str("SITES_URL", default="http://127.0.0.2:8000").rstrip("/")
check_separate_origins(
    "SITES_URL", SITES_URL, "PLATFORM_URL", "INTEGRATIONS_URL", production=not DEBUG
)


def env_rate(name: str, default: str) -> str:
    """A rate such as ``30/minute`` (per second, minute, hour or day); anything else stops
    start-up naming the variable."""
    raw = env.str(name, default=default).strip()
    if not re.fullmatch(r"[1-9][0-9]{0,8}/(second|minute|hour|day)", raw):
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per second, minute, hour or day, such as "
            f"30/minute, not {raw!r}"
        )
    return raw


# What a published site's visitors may send, per client address (docplatform/sites/throttle.py):
# page feedback (the site's form and the beacon's) and presses of blocks made for visitors;
# over it they get a 429 saying when to try again.
SITE_RATES = {
    "feedback": env_rate("SITE_FEEDBACK_RATE", "20/minute"),
    "blocks": env_rate("SITE_BLOCK_PRESS_RATE", "60/minute"),
}
# The three hosts are served: admit them without repeating them in ALLOWED_HOSTS.
for _url in (PLATFORM_URL, INTEGRATIONS_URL, SITES_URL):
    _host = urlsplit(_url).hostname
    _host = f"[{_host}]" if ":" in _host else _host
    if _host not in ALLOWED_HOSTS and "*" not in ALLOWED_HOSTS:
        ALLOWED_HOSTS.append(_host)

# Where the runtime hosts listen: one URL, or several comma-separated (a version's calls go to
# one of them, chosen by its bundle's hash: integrations/gateway/hosts.py).
RUNTIME_URL = ",".join(
    url.strip().rstrip("/")
    for url in env.str("RUNTIME_URL", default="http://127.0.0.1:8100").split(",")
    if url.strip()
)
for _url in RUNTIME_URL.split(","):
    origin_host("RUNTIME_URL", _url)  # each http(s)://host[:port]
# The key that signs every envelope to the runtime host (the host is started with the same
# one: `manage.py runtime_host` passes it). Without one, it is derived from SECRET_KEY.
RUNTIME_SIGNING_KEY = env.str("RUNTIME_SIGNING_KEY", default="")
RUNTIME_CONNECT_TIMEOUT = env_positive(float, "RUNTIME_CONNECT_TIMEOUT", 3.0)
RUNTIME_RESPONSE_TIMEOUT = env_positive(float, "RUNTIME_RESPONSE_TIMEOUT", 15.0)
# An answer from the runtime host over this is not read past it: the call fails (MB: MiB).
RUNTIME_MAX_ANSWER_MB = env_positive(float, "RUNTIME_MAX_ANSWER_MB", 10.0)
# Seconds a page waits for its integration blocks (rendered at once); a block that has not
# answered by then shows an inline box instead.
BLOCK_RENDER_DEADLINE = env_positive(float, "BLOCK_RENDER_DEADLINE", 3.0)
# Deliveries wait 1x, 2x, 4x this before trying an unreachable runtime host again.
RUNTIME_RETRY_BASE_DELAY = env_number(float, "RUNTIME_RETRY_BASE_DELAY", 2.0)
# Event deliveries one integration may have running at once, across the workers: the rest are
# postponed (about RUNTIME_RETRY_BASE_DELAY), so a hanging integration holds few worker slots.
RUNTIME_INTEGRATION_CONCURRENCY = env_positive(int, "RUNTIME_INTEGRATION_CONCURRENCY", 4)
# Requests relayed to an integration's public endpoint: body size and answer size limits.
PUBLIC_ENDPOINT_MAX_BODY = env_positive(int, "PUBLIC_ENDPOINT_MAX_BODY", 1024 * 1024)
# How long an OAuth state issued to an integration stays valid (seconds).
OAUTH_STATE_MAX_AGE = env_positive(int, "OAUTH_STATE_MAX_AGE", 600)
# `dev` keeps an integration's newest development versions, this many; the older ones are
# removed (never the one development installations run, never a released version).
INTEGRATION_DEVELOPMENT_VERSIONS_KEPT = env_positive(
    int, "INTEGRATION_DEVELOPMENT_VERSIONS_KEPT", 5
)
# Integration logs (a line per call of integration code) are kept this many days; the purge
# runs every INTEGRATION_LOG_PURGE_INTERVAL_SECONDS.
INTEGRATION_LOG_RETENTION_DAYS = env_positive(float, "INTEGRATION_LOG_RETENTION_DAYS", 7.0)
CELERY_BEAT_SCHEDULE["purge-integration-logs"] = {
    "task": "integrations.tasks.purge_logs",
    "schedule": env_positive(float, "INTEGRATION_LOG_PURGE_INTERVAL_SECONDS", 3600.0),
}

# --- Git sync of spaces (the documentation product; README, "Git sync") --------------------------
# The repositories a space may sync with: comma-separated glob patterns (fnmatch, where "*"
# also matches "/") matched against the address as entered: https://, ssh:// or an absolute
# path for a repository on the worker's disk. Nothing is allowed by default, except in
# development (DEBUG), where the repositories under <VAR_DIR>/git/ are.
GIT_SYNC_ALLOWED = [
    pattern.strip()
    for pattern in env.list(
        "GIT_SYNC_ALLOWED", default=[str(VAR_DIR / "git" / "*")] if DEBUG else []
    )
    if pattern.strip()
]
# Each network operation of a sync (connect, and each read or write) gives up after this.
GIT_SYNC_TIMEOUT_SECONDS = env_positive(float, "GIT_SYNC_TIMEOUT_SECONDS", 30.0)
# A sync still running (or never started) after this is taken as lost with its worker: it is
# marked failed, and the space may sync again.
GIT_SYNC_MAX_SECONDS = env_positive(int, "GIT_SYNC_MAX_SECONDS", 900)
CELERY_BEAT_SCHEDULE["fail-stale-git-syncs"] = {
    "task": "docplatform.tasks.fail_stale_git_syncs",
    "schedule": 300.0,
}

# --- Hardened defaults ---------------------------------------------------------------------------
# Login throttling (django-axes): failed sign-ins on the marketplace's and the admin's login
# pages are recorded in the database, so every web process counts the same failures. After
# LOGIN_FAILURE_LIMIT failures from one address, or for one username, further sign-ins from
# that address or for that username are refused for LOGIN_LOCKOUT_MINUTES from the last
# counted failure; guesses during the lockout neither count nor extend it. The lockout page
# says when to try again (docplatform/login_throttle.py).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_positive(int, "LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_positive(float, "LOGIN_LOCKOUT_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "docplatform.api_visitors.client_ip"
AXES_LOCKOUT_CALLABLE = "docplatform.login_throttle.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # failures are kept; successful sign-ins are not logged
AXES_VERBOSE = False

# HTTPS: when the platform is reached over https, cookies are sent over https only, plain
# http is redirected and browsers are told to keep to https (HSTS).
PLATFORM_IS_HTTPS = PLATFORM_URL.startswith("https://")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PLATFORM_IS_HTTPS
SECURE_SSL_REDIRECT = PLATFORM_IS_HTTPS
SECURE_HSTS_SECONDS = (
    env_number(int, "SECURE_HSTS_SECONDS", 365 * 24 * 3600) if PLATFORM_IS_HTTPS else 0
)
if TRUSTED_PROXY_COUNT > 0:
    # The trusted proxies terminate TLS and say which scheme the client used.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp) on every platform page: scripts, styles, fonts and
# frames from the platform's own origin only, no inline script or style, no plugins, and no
# page may frame it. The integrations host (INTEGRATIONS_URL) never gets it: its answers are
# the integrations' own. The pages of spaces add images from https addresses
# (docplatform.documents.views.SpaceView); the marketplace does not, so an integration's
# summary cannot learn who reads it through an image.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
    }
}
