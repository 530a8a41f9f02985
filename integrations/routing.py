"""Routing of events to installations: the router this app registers with the outbox
(``docplatform.events``), which knows no installation itself.

Who receives a platform event is ``routing_selectors.event_recipients`` (DESIGN.md, "where an event
goes"); an addressed event (a setup event, a ping) goes to its one installation unless it is
paused. A claimed delivery is still attempted only while its installation receives the event
(``policies.receives_event``): paused meanwhile, it is cancelled.
"""

from docplatform.events.registry import Consumer, Recipient, Router

from .policies import is_paused, receives_event
from .routing_selectors import event_routing, recipient_of
from .services.logs import integration_logs_not_delivered
from .services.runtime_deliveries import longest_hold

#: The default consumer: every installation's deliveries go to the integration runtime
#: (which runs the integration's code), unless a built-in integration registered its own.
RUNTIME_CONSUMER = Consumer(
    name="runtime", task_name="integrations.tasks.run_delivery", longest_hold=longest_hold
)


def installation_recipients(event, installation) -> list[Recipient]:
    """An event's recipients; the installations it does not reach only for lack of its scope
    get a ``not_delivered`` line in their integration's log."""
    if installation is not None:
        return [] if is_paused(installation) else [recipient_of(installation)]
    routing = event_routing(event)
    integration_logs_not_delivered(event, routing.undelivered)
    return routing.recipients


def delivery_still_wanted(delivery) -> bool:
    """False when its installation was paused meanwhile (or, for a platform event, is no
    longer receiving). Setup events also reach a pending installation."""
    return receives_event(delivery.installation, delivery.event.type)


INSTALLATION_ROUTER = Router(
    name="installations", recipients=installation_recipients, still_wanted=delivery_still_wanted
)
