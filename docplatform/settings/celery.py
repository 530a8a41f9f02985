"""Celery: the broker (``CELERY_BROKER_URL``; unset, kombu's file-system transport in
VAR_DIR), how long a publish may wait for it, the queues and the workers' task handling.

``CELERY_BEAT_SCHEDULE`` starts empty here; each concern's settings add its periodic tasks.
"""

from .base import VAR_DIR
from .environment import env, env_number, env_positive
from .web import TIME_ZONE

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
# A Redis broker shared with other users (another deployment, a test run): every key and
# channel the broker uses starts with this prefix (kombu's ``global_keyprefix``), so two
# deployments on one Redis database never take each other's tasks. Every process of one
# deployment (web, workers, beat) must have the same prefix.
CELERY_BROKER_KEY_PREFIX = env.str("CELERY_BROKER_KEY_PREFIX", default="")
if CELERY_BROKER_KEY_PREFIX and CELERY_BROKER_URL.split(":", 1)[0] in ("redis", "rediss"):
    CELERY_BROKER_TRANSPORT_OPTIONS |= {"global_keyprefix": CELERY_BROKER_KEY_PREFIX}
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
