"""The outbox, the producers' side: firing events, queueing their deliveries, drains, the sweeper.

``fire(...)`` writes the event and one delivery per recipient (as the registered routers
say) in the caller's transaction; after commit, Celery tasks take the deliveries to their
consumer (as registered): a task per delivery, or one drain per burst for a batch consumer,
which claims the due deliveries itself. A periodic sweeper re-queues deliveries that were
committed but never queued (broker down) or whose worker died, so nothing is lost.

The consumers' side (claim, settle, redeliver) is ``leases``.
"""

import logging
import uuid
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from ..observability.tracing import traceparent_now
from .catalogue import payload as catalogue_payload
from .drain_flag import drain_flag_replace, drain_flag_set
from .inserts import event_insert
from .models import Delivery, DrainRequest, Event
from .publisher import BrokerUnavailable, publish, raise_if_broker_down
from .registry import consumer_for, consumer_named, reads_visitor_claims, routers
from .schemas import payload_check

logger = logging.getLogger(__name__)

ENQUEUE_EVENT_TASK = "docplatform.tasks.enqueue_event_deliveries"


# --- firing -----------------------------------------------------------------------------------


def fire(
    event_type: str,
    *,
    organization,
    space=None,
    site=None,
    installation=None,
    test: bool = False,
    **fields,
) -> Event:
    """Record an event and its deliveries in the current transaction; queue them after commit.

    ``fields`` are the payload's, as the catalogue defines them for ``event_type``.
    ``installation`` addresses the event (a setup event, a ping) to that one installation;
    other events go to every recipient the routers find. ``test``: a sample event (made-up
    data), which must be addressed to one installation and stays that installation's alone
    (``Event.test``). With ``EVENT_PAYLOAD_CHECKS`` on
    (tests, DEBUG), a payload that does not match its schema raises EventPayloadInvalid
    before anything is written.
    """
    if test and installation is None:
        raise ValueError("a test event is addressed to one installation")
    payload = catalogue_payload(event_type, **fields)
    if settings.EVENT_PAYLOAD_CHECKS:
        payload_check(event_type, payload)
    event = Event(
        type=event_type,
        organization=organization,
        space=space,
        site=site,
        payload=payload,
        traceparent=traceparent_now(),  # its deliveries continue this trace (tracing on)
        test=test,
    )
    deliveries = _deliveries(event, installation)
    event_insert(event, deliveries)
    if deliveries:
        work = [(delivery.pk, delivery.consumer) for delivery in deliveries]
        transaction.on_commit(partial(_enqueue_after_commit, event.pk, work))
    return event


def payload_for(event: Event, delivery: Delivery) -> dict:
    """The JSON body an installation receives for one delivery: the visitor's claims only
    for an installation that may read them (``registry.reads_visitor_claims``); a test event's
    carries ``"test": true`` (the others carry no ``test``: the specification's body, as it
    was)."""
    payload = {
        "type": event.type,
        "eventId": str(delivery.event_uuid),
        "installationId": delivery.installation_id,
        **({"test": True} if event.test else {}),
        **event.payload,
    }
    if _has_claims(payload) and not reads_visitor_claims(delivery.installation_id):
        return payload_without_claims(payload)
    return payload


def _has_claims(payload: dict) -> bool:
    visitor = payload.get("visitor")
    return isinstance(visitor, dict) and "claims" in visitor


def payload_without_claims(payload: dict) -> dict:
    """``payload`` less the visitor's claims (what anyone but their readers sees)."""
    if not _has_claims(payload):
        return payload
    visitor = {key: value for key, value in payload["visitor"].items() if key != "claims"}
    return {**payload, "visitor": visitor}


def _deliveries(event: Event, installation) -> list[Delivery]:
    """One delivery per recipient (as the routers say and the consumers want), not saved."""
    deliveries = []
    now = timezone.now()
    for router in routers():
        for recipient in router.recipients(event, installation):
            consumer = consumer_for(recipient)
            if consumer.wants(recipient, event.type):
                deliveries.append(
                    Delivery(
                        event=event,
                        installation_id=recipient.installation_id,
                        consumer=consumer.name,
                        event_uuid=uuid.uuid4(),
                        # A drained consumer's delivery is queued by the drain this commit
                        # requests.
                        queued_at=now if consumer.drain_task_name else None,
                    )
                )
    return deliveries


def _enqueue_after_commit(event_id: str, work: list[tuple[int, str]]) -> None:
    """Drained consumers get one drain request each; of the others' deliveries, few are queued
    at once and a large fan-out is handed to one task.

    A broker that fails or hangs costs the commit one bounded wait (see ``publisher``) and one
    warning; what was not sent is the sweeper's.
    """
    try:
        drained = {name for _, name in work if consumer_named(name).drain_task_name}
        for name in sorted(drained):
            _drain_send(name)
        work = [(delivery_id, name) for delivery_id, name in work if name not in drained]
        if len(work) <= settings.DELIVERY_INLINE_FANOUT:
            _send(work, countdown=None, sent=[])
        else:
            publish(ENQUEUE_EVENT_TASK, args=[event_id])
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): event %s's deliveries are left to the sweeper", exc, event_id
        )


# --- queueing ---------------------------------------------------------------------------------


def deliveries_enqueue(work: list[tuple[int, str]], *, countdown: float | None = None) -> int:
    """Send each (delivery id, consumer name) to its consumer and mark it queued: one drain per
    drained consumer (unless a ``countdown`` asks for the delivery's own task), else a task
    per delivery.

    A broker failure is logged (once), not raised: the rows stay unqueued and the sweeper
    sends them once the broker is back. Returns how many were sent.
    """
    sent: list[int] = []
    try:
        _send(work, countdown=countdown, sent=sent)
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): %d deliveries are left to the sweeper",
            exc,
            len(work) - len(sent),
        )
    return len(sent)


def _send(work: list[tuple[int, str]], *, countdown: float | None, sent: list[int]) -> None:
    """deliveries_enqueue's work: appends to ``sent`` what was sent (and marks it queued), and
    raises BrokerUnavailable at the first publish that fails."""
    drained = set()
    if countdown is None:
        drained = {name for _, name in work if consumer_named(name).drain_task_name}
    try:
        for name in sorted(drained):
            if _drain_send(name, force=True):
                sent += [delivery_id for delivery_id, consumer in work if consumer == name]
        for delivery_id, name in work:
            if name not in drained:
                task = consumer_named(name).task_name
                publish(task, args=[delivery_id], countdown=countdown)
                sent.append(delivery_id)
    finally:
        if sent:
            Delivery.objects.filter(pk__in=sent).update(queued_at=timezone.now())


def deliveries_enqueue_for_event(event_id: str) -> int:
    """Queue an event's deliveries not queued yet (a large fan-out, handed to a task)."""
    work = list(
        Delivery.objects.filter(event_id=event_id, queued_at__isnull=True).values_list(
            "pk", "consumer"
        )
    )
    return deliveries_enqueue(work)


def drain_request(consumer: str, *, force: bool = False, args=()) -> bool:
    """Queue a drain of the consumer's due deliveries, unless one is queued, or running and
    not yet caught up (it takes what commits meanwhile). ``force`` sends one whatever the
    flag says (the sweeper's way: a flag may be stale, and a drain with a backlog asks for
    help, passing the drain task's ``args``). A broker failure is logged, not raised.
    Returns whether a drain was sent.
    """
    try:
        return _drain_send(consumer, force=force, args=args)
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): %s deliveries are left to the sweeper", exc, consumer
        )
        return False


def _drain_send(consumer: str, *, force: bool = False, args=()) -> bool:
    """drain_request's work, raising BrokerUnavailable.

    **The drain request flag** (``DrainRequest.requested_at``) says whether a drain was sent
    and has not caught up yet: then a commit sends none. It is set only once the drain is
    known to be sent. Before the publish, the flag holds a time in the future (the publish's
    deadline: a publish in progress); a producer finding that takes over and sends a drain of
    its own, so a publish that hangs or fails in one process never holds up the others'
    deliveries (a drain sent twice finds nothing the second time). After the publish, the
    flag holds the time it was sent, unless a drain cleared it meanwhile; a failed publish
    clears it. Setting and each of these changes are one statement each.

    A commit reads the flag before any write, and one finding a drain sent writes nothing.
    None of its events is missed: they committed before the read, the drain clears the flag
    (once caught up) after that read, or the read would have found it clear, and the
    drain's last claim, after the clearing, takes them.
    """
    raise_if_broker_down()
    now = timezone.now()
    publishing = now + timedelta(seconds=4 * settings.BROKER_TIMEOUT_SECONDS)
    if not drain_flag_set(consumer, publishing, now=now, force=force):
        return False
    try:
        publish(consumer_named(consumer).drain_task_name, args=args)
    except BrokerUnavailable:
        drain_flag_replace(consumer, publishing, None)
        raise
    drain_flag_replace(consumer, publishing, timezone.now())
    return True


def drain_release(consumer: str) -> None:
    """Clear the drain request flag: from now on a commit queues a new drain. A drain calls
    it once it caught up, then claims once more for what committed before."""
    DrainRequest.objects.filter(consumer=consumer).update(requested_at=None)


def deliveries_sweep() -> int:
    """The sweeper: re-queue open deliveries that nobody is working on and that are overdue.

    Overdue: never queued (the broker was down at commit), or queued or due for a retry
    longer ago than the grace period without a worker holding them (a lost message, or a
    worker killed mid-flight whose lease ran out).
    """
    now = timezone.now()
    grace = now - timedelta(seconds=settings.DELIVERY_SWEEP_GRACE_SECONDS)
    stale = (
        Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(Q(queued_at__isnull=True, created_at__lt=grace) | Q(queued_at__lt=grace))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lt=grace))
    )
    work = list(stale.values_list("pk", "consumer")[: settings.DELIVERY_SWEEP_BATCH])
    if work:
        logger.info("sweeper re-queues %d deliveries", len(work))
    return deliveries_enqueue(work)


# --- sending existing events again (a replay) -------------------------------------------------


def deliveries_add(consumer: str, additions: list[tuple[str, str, uuid.UUID]]) -> list[int]:
    """Make deliveries of events already fired: each (event id, installation id, event_uuid)
    a delivery to that installation with that eventId, taken by ``consumer``, in the caller's
    transaction and queued after commit as ``fire``'s are. What exists already for that
    (event, installation) or that event_uuid is left alone, and so is a test event: it stays
    with the one installation it was fired to (``Event.test``), and an event purged since it
    was chosen (``retention``). Returns the ids of the deliveries that now carry the given
    event_uuids (made now, or by an earlier call with the same ones), in the order given."""
    sendable = set(
        Event.objects.filter(
            pk__in={event_id for event_id, _, _ in additions}, test=False
        ).values_list("pk", flat=True)
    )
    additions = [addition for addition in additions if addition[0] in sendable]
    if not additions:
        return []
    drained = consumer_named(consumer).drain_task_name is not None
    now = timezone.now()
    Delivery.objects.bulk_create(
        [
            Delivery(
                event_id=event_id,
                installation_id=installation_id,
                consumer=consumer,
                event_uuid=event_uuid,
                queued_at=now if drained else None,  # the drain this commit requests
            )
            for event_id, installation_id, event_uuid in additions
        ],
        ignore_conflicts=True,
    )
    made = dict(
        Delivery.objects.filter(
            event_uuid__in=[event_uuid for _, _, event_uuid in additions]
        ).values_list("event_uuid", "pk")
    )
    ids = [made[event_uuid] for _, _, event_uuid in additions if event_uuid in made]
    if ids:
        transaction.on_commit(partial(_queue_after_commit, consumer, ids))
    return ids


def deliveries_send_again(ids: list[int]) -> list[int]:
    """Start these finished deliveries anew, as ``leases.delivery_redeliver`` does one (the
    same eventId, a new chain of attempts), in one statement in the caller's transaction,
    queued after commit; those still open, or settled with nothing sent, are left alone.
    Returns the ids started anew."""
    finished = (
        Delivery.objects.filter(pk__in=ids)
        .exclude(status__in=Delivery.OPEN_STATUSES)
        .exclude(status=Delivery.Status.SUCCEEDED, attempts=0)
    )
    chosen = list(finished.select_for_update(no_key=True).values_list("pk", "consumer"))
    if not chosen:
        return []
    Delivery.objects.filter(pk__in=[pk for pk, _ in chosen]).update(
        status=Delivery.Status.PENDING,
        chain=F("chain") + 1,
        attempts=0,
        outcome="",
        last_error="",
        completed_at=None,
        next_attempt_at=None,
        lease_expires_at=None,
        queued_at=None,
    )
    for consumer in {name for _, name in chosen}:
        mine = [pk for pk, name in chosen if name == consumer]
        transaction.on_commit(partial(_queue_after_commit, consumer, mine))
    return [pk for pk, _ in chosen]


def _queue_after_commit(consumer: str, ids: list[int]) -> None:
    """A drained consumer's deliveries join its drain (one is requested unless one runs),
    marked queued; the others get a task each. The broker down: the sweeper's."""
    if consumer_named(consumer).drain_task_name is None:
        deliveries_enqueue([(pk, consumer) for pk in ids])
        return
    Delivery.objects.filter(pk__in=ids, queued_at__isnull=True).update(queued_at=timezone.now())
    drain_request(consumer)
