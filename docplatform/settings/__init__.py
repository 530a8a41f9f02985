"""Settings, read from the environment (and an optional ``.env`` beside manage.py): the
module ``DJANGO_SETTINGS_MODULE`` names (``docplatform.settings``), made of one module per
concern, read in this order:

- ``environment``: the ``env`` they all read and the readers that refuse a bad value;
- ``base``: project paths (``VAR_DIR``), ``DEBUG``, the secret and encryption keys, allowed
  hosts, installed apps, middleware, the root URLconf;
- ``database``: ``DATABASE_URL`` (SQLite in VAR_DIR by default, or PostgreSQL);
- ``cache``: ``CACHE_URL``, the cache every web process shares (the database by default, or
  Redis), the sessions read through it, and how long a CDN may keep a site's public pages;
- ``web``: templates, passwords, language and time zone, static files, logging;
- ``api``: the REST API (DRF, its errors and its OpenAPI schema), trusted proxies;
- ``celery``: the broker (the file system by default, or Redis or RabbitMQ), queues, workers;
- ``events``: event deliveries (the outbox) and visitor-record purges;
- ``webhooks``: webhook deliveries;
- ``hosts``: the platform's, the integrations' and the sites' origins, visitor rates;
- ``runtime``: the integration runtime;
- ``gitsync``: Git sync of spaces;
- ``openapi``: OpenAPI documents: their size, and the URLs they may be fetched from;
- ``content``: how many pages a space holds, how large a whole revision written at once is;
- ``security``: login throttling, HTTPS and the Content-Security-Policy;
- ``teams``: who may create an organization;
- ``email``: outgoing e-mail (invitations) and how long an invitation lasts;
- ``conversations``: the bounds of a conversation an integration posts;
- ``observability``: traces (OpenTelemetry, off unless configured) and ``/metrics``.

With nothing set, the platform runs on its embedded default: SQLite and a Celery broker on the
file system, so it starts on a fresh machine with no server. A value a module refuses raises
ImproperlyConfigured naming the variable (``docplatform.startup`` prints it in one line).
"""

# In this order, not sorted: each module reads the ones before it, and when several values are
# wrong the first one read is the one reported.
# isort: off
from .environment import *  # noqa: F403
from .base import *  # noqa: F403
from .database import *  # noqa: F403
from .cache import *  # noqa: F403
from .web import *  # noqa: F403
from .api import *  # noqa: F403
from .celery import *  # noqa: F403
from .events import *  # noqa: F403
from .webhooks import *  # noqa: F403
from .hosts import *  # noqa: F403
from .runtime import *  # noqa: F403
from .gitsync import *  # noqa: F403
from .openapi import *  # noqa: F403
from .content import *  # noqa: F403
from .security import *  # noqa: F403
from .teams import *  # noqa: F403
from .email import *  # noqa: F403
from .conversations import *  # noqa: F403
from .observability import *  # noqa: F403
# isort: on
