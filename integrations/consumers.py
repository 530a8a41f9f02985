"""Who takes an installation's deliveries: the integration runtime, or a built-in integration.

Every installation's deliveries go to the runtime (which runs the integration's code) unless
a built-in integration registered a consumer of its own under its name, as the webhook
integration does. A consumer's ``wants`` filters the events an installation receives
(the webhook integration forwards only the events its configuration selects).

A consumer with a ``drain_task_name`` takes its fresh deliveries in batches: producers ask
for one drain task (``services.deliveries.drain_request``) instead of queueing a task per
delivery, and the drain claims every due delivery of the consumer. ``task_name`` still takes
single deliveries: retries at their countdown.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Consumer:
    name: str
    task_name: str
    #: (recipient, event type) -> whether it takes the event; see selectors.Recipient.
    wants: Callable[[object, str], bool] = lambda recipient, event_type: True
    drain_task_name: str | None = None


RUNTIME = Consumer(name="runtime", task_name="integrations.tasks.run_delivery")
_BY_INTEGRATION: dict[str, Consumer] = {}
_BY_NAME: dict[str, Consumer] = {RUNTIME.name: RUNTIME}


def register_consumer(integration_name: str, consumer: Consumer) -> None:
    _BY_INTEGRATION[integration_name] = consumer
    _BY_NAME[consumer.name] = consumer


def consumer_for(integration_name: str) -> Consumer:
    return _BY_INTEGRATION.get(integration_name, RUNTIME)


def consumer_named(name: str) -> Consumer:
    return _BY_NAME[name]
