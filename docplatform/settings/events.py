"""Event deliveries (the outbox): payload checks, the fan-out, workers' leases, the sweeper,
the retention of events, the purges of visitor records and how workers keep their database
connections."""

from .base import DEBUG
from .celery import CELERY_BEAT_SCHEDULE
from .environment import env_flag, env_number, env_positive

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
# Events older than this many days are purged hourly, each once its every delivery is
# settled (docplatform/events/retention.py), with those deliveries, this many per transaction.
EVENT_RETENTION_DAYS = env_positive(int, "EVENT_RETENTION_DAYS", 90)
EVENT_PURGE_BATCH = 1000
CELERY_BEAT_SCHEDULE["purge-events"] = {
    "task": "docplatform.tasks.purge_events",
    "schedule": 3600.0,
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
