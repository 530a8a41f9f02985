"""Webhooks: retries, timeouts, batched drains and concurrency of the senders, the networks
webhook URLs may reach, retention, and when a failing endpoint is disabled."""

from django.core.exceptions import ImproperlyConfigured

from .celery import CELERY_BEAT_SCHEDULE, CELERY_BROKER_URL
from .environment import env, env_networks, env_number, env_positive

# The base of the retry schedule: retries after 1x, 2x and 4x this, each +/-10 %.
WEBHOOK_RETRY_BASE_DELAY = env_number(float, "WEBHOOK_RETRY_BASE_DELAY", 1.0)
# The longest a 429's Retry-After is waited for (seconds), by an endpoint that opted in to it
# (its setting retry_after); the others keep to the schedule whatever a 429 says.
WEBHOOK_RETRY_AFTER_MAX = env_positive(float, "WEBHOOK_RETRY_AFTER_MAX", 60.0)
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
# Where the limits per endpoint (its configuration's max_in_flight and max_per_second, and a
# 429's Retry-After for an endpoint that opted in), held across every worker process and
# machine, live: a redis:// URL, or "database" (a table, its rows locked). By default the
# broker's Redis when the broker is Redis, else the database (webhooks/transport/limits.py).
_REDIS = ("redis://", "rediss://")
WEBHOOK_LIMITS_URL = env.str(
    "WEBHOOK_LIMITS_URL",
    default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(_REDIS) else "database",
)
if WEBHOOK_LIMITS_URL != "database" and not WEBHOOK_LIMITS_URL.startswith(_REDIS):
    raise ImproperlyConfigured(
        "WEBHOOK_LIMITS_URL must be a redis:// or rediss:// URL, or database, not "
        f"{WEBHOOK_LIMITS_URL.split(':', 1)[0]!r}"
    )
# Prepended to every key of the limits in Redis (a Redis shared with another deployment or a
# test run); the same for every process of one deployment.
WEBHOOK_LIMITS_KEY_PREFIX = env.str("WEBHOOK_LIMITS_KEY_PREFIX", default="")
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
# A replay sends an endpoint at most this many events of a time range (the oldest first), this
# many at a time: the next batch once the previous one is settled, so a replay never floods
# the receiver nor holds up the live events behind it.
WEBHOOK_REPLAY_LIMIT = env_positive(int, "WEBHOOK_REPLAY_LIMIT", 1000)
WEBHOOK_REPLAY_BATCH = env_positive(int, "WEBHOOK_REPLAY_BATCH", 100)
