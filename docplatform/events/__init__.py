"""The outbox every app fires into, in the host (DESIGN.md, "Layout").

- ``catalogue``: one definition of each event's fields (``fire`` builds every payload with it).
- ``models``: Event, Delivery, DrainRequest (registered with the docplatform app).
- ``registry``: the routers (who receives an event), the consumers (who takes deliveries)
  and who reads visitors' claims, that apps register in their ``AppConfig.ready()``; the host
  imports no plug-in app.
- ``outbox``: ``fire``, queueing, drains, the sweeper; ``inserts`` writes a fired event and its
  deliveries (one compiled statement on PostgreSQL), ``drain_flag`` the drain request flag's
  statements.
- ``leases``: claim / settle / redeliver, the one API consumers work through deliveries with.
- ``publisher``: every publish to the broker, bounded in time, with a breaker.
"""

from .catalogue import (
    EVENT_FIELDS,
    EVENT_SCOPES,
    FEEDBACK_RATINGS,
    SETUP_EVENTS,
    SITE_EVENTS,
    SPACE_EVENTS,
    EventType,
    Visitor,
)
from .outbox import fire, payload_for, payload_without_claims

__all__ = [
    "EVENT_FIELDS",
    "EVENT_SCOPES",
    "FEEDBACK_RATINGS",
    "SETUP_EVENTS",
    "SITE_EVENTS",
    "SPACE_EVENTS",
    "EventType",
    "Visitor",
    "fire",
    "payload_for",
    "payload_without_claims",
]
