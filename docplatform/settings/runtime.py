"""The integration runtime: where the runtime hosts listen (``RUNTIME_URL``), the key that signs
envelopes to them, timeouts and limits of calls, retries and per-integration concurrency,
public endpoints, OAuth state, development versions kept and integration logs."""

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from .celery import CELERY_BEAT_SCHEDULE
from .environment import env, env_flag, env_number, env_positive, origin_host


def runtime_host_url(url: str) -> str:
    """A runtime host's URL: ``unix:///path`` or ``tcp://host:port`` (frames on a persistent
    connection, integrations/runtime/frames.py) or ``http(s)://host[:port]`` (HTTP, the
    fallback); anything else stops start-up."""
    parts = urlsplit(url)
    if parts.scheme == "unix" and parts.path.startswith("/") and not parts.netloc:
        return url
    if parts.scheme == "tcp" and parts.hostname and parts.port and not parts.path:
        return url
    if parts.scheme not in ("http", "https"):
        raise ImproperlyConfigured(
            f"RUNTIME_URL must be unix:///path, tcp://host:port or http(s)://host[:port], "
            f"not {url!r}"
        )
    origin_host("RUNTIME_URL", url)
    return url


# Where the runtime hosts listen: one URL, or several comma-separated (a version's calls go to
# one of them, chosen by its bundle's hash: integrations/gateway/hosts.py).
RUNTIME_URL = ",".join(
    runtime_host_url(url.strip().rstrip("/"))
    for url in env.str("RUNTIME_URL", default="http://127.0.0.1:8100").split(",")
    if url.strip()
)
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
# Seconds a visitor's sign-in waits for the site's site:adaptive:write installations'
# visitor_claims handlers (called at once); one that has not answered by then adds nothing.
VISITOR_CLAIMS_DEADLINE = env_positive(float, "VISITOR_CLAIMS_DEADLINE", 3.0)
# Deliveries wait 1x, 2x, 4x this before trying an unreachable runtime host again.
RUNTIME_RETRY_BASE_DELAY = env_number(float, "RUNTIME_RETRY_BASE_DELAY", 2.0)
# Event deliveries one integration may have running at once, across the workers: the rest are
# postponed (about RUNTIME_RETRY_BASE_DELAY), so a hanging integration holds few worker slots.
RUNTIME_INTEGRATION_CONCURRENCY = env_positive(int, "RUNTIME_INTEGRATION_CONCURRENCY", 4)
# A web process writes its calls' log lines (public endpoints, components) in batches, every
# this many seconds, by a thread of its own (PostgreSQL only; 0: each line once its request's
# answer is sent). A line shows in the Logs page up to this much later. A quarter of a second
# is below what a person opening the page notices; under load, 0.05 cost the web processes a
# tenth more CPU per call and PostgreSQL twice as much (a commit per batch).
RUNTIME_LOG_BATCH_SECONDS = env_number(float, "RUNTIME_LOG_BATCH_SECONDS", 0.25)
# What a request leaves for after its answer (a component's markup kept for the next render)
# is done by a thread of the web process, so the next request on the connection does not
# wait for it (PostgreSQL only; off: by the request's own thread, after its answer).
RUNTIME_AFTER_ANSWER_THREAD = env_flag("RUNTIME_AFTER_ANSWER_THREAD", True)
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
