"""The registries apps fill in their ``AppConfig.ready()``: routers, consumers, and who may
read a visitor's claims.

The host knows no plug-in app. A **router** says who receives an event (the integrations app
registers the installation router); a **consumer** takes deliveries to where they go (the
integrations app registers the runtime as the default consumer, the webhook integration its
own consumer for its installations).

A consumer with a ``drain_task_name`` takes its fresh deliveries in batches: producers ask
for one drain task (``outbox.drain_request``) instead of queueing a task per delivery, and the
drain claims every due delivery of the consumer. ``task_name`` still takes single
deliveries: retries at their countdown, and what the sweeper re-queues.

A **claims reader** says whether an installation receives the signed-in visitor's claims in
the events that carry them (``visitor.claims`` of ``site_view`` and ``page_feedback``; the
integrations app registers "holds ``site:visitor:claims``"). Without one, nobody does.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Recipient:
    """What routing knows of an installation that an event goes to."""

    installation_id: str
    integration_name: str
    configuration: dict


@dataclass(frozen=True)
class Router:
    """Who receives events.

    ``recipients(event, installation)``: the recipients of a new event; ``installation`` is
    the one installation an addressed event (a setup event, a ping) is for, else None.
    ``still_wanted(delivery)``: whether a claimed delivery should still be attempted (its
    installation may have been paused meanwhile); a router answers True for deliveries that
    are none of its concern.
    """

    name: str
    recipients: Callable[[object, object | None], list[Recipient]]
    still_wanted: Callable[[object], bool] = lambda delivery: True


def _wants_everything(recipient: Recipient, event_type: str) -> bool:
    return True


def _held_briefly() -> float:
    return 0.0


@dataclass(frozen=True)
class Consumer:
    name: str
    task_name: str
    #: (recipient, event type) -> whether it takes the event.
    wants: Callable[[Recipient, str], bool] = _wants_everything
    drain_task_name: str | None = None
    #: () -> the longest, in seconds, a delivery it claimed may stay held before its result
    #: is settled (its timeouts, read from the settings): the lease must be longer, or a
    #: delivery still being attempted is claimed again and sent twice (``checks``).
    longest_hold: Callable[[], float] = _held_briefly


_ROUTERS: dict[str, Router] = {}
_CONSUMERS: dict[str, Consumer] = {}
_BY_INTEGRATION: dict[str | None, Consumer] = {}


def register_router(router: Router) -> None:
    _ROUTERS[router.name] = router


def routers() -> list[Router]:
    return list(_ROUTERS.values())


def register_consumer(consumer: Consumer, *, integration: str | None = None) -> None:
    """Register ``consumer`` for the installations of ``integration`` (None: the default, for
    every integration without a consumer of its own)."""
    _BY_INTEGRATION[integration] = consumer
    _CONSUMERS[consumer.name] = consumer


def consumer_for(recipient: Recipient) -> Consumer:
    consumer = _BY_INTEGRATION.get(recipient.integration_name) or _BY_INTEGRATION.get(None)
    if consumer is None:
        raise LookupError(f"no consumer takes {recipient.integration_name}'s deliveries")
    return consumer


def has_own_consumer(integration_name: str) -> bool:
    """Whether an app takes this integration's deliveries itself (the webhook integration's
    sender), rather than the default consumer (the runtime, which runs the integration's
    code)."""
    return integration_name in _BY_INTEGRATION


def consumer_named(name: str) -> Consumer:
    return _CONSUMERS[name]


def consumer_names() -> list[str]:
    """The registered consumers' names, in the order the apps registered them."""
    return list(_CONSUMERS)


_CLAIMS_READERS: list[Callable[[str], bool]] = []


def register_claims_reader(reader: Callable[[str], bool]) -> None:
    """``reader(installation_id)``: whether that installation may read visitors' claims."""
    if reader not in _CLAIMS_READERS:
        _CLAIMS_READERS.append(reader)


def reads_visitor_claims(installation_id: str) -> bool:
    return any(reader(installation_id) for reader in _CLAIMS_READERS)
