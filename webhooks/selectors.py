"""Reads of the webhook integration: which installations send webhooks, the state of their
signing secrets and endpoints, which events they may receive, and their delivery log."""

import time
from datetime import UTC, datetime, timedelta

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import TruncHour
from django.utils import timezone

from docplatform.events.catalogue import EVENT_SCOPES
from docplatform.events.models import Delivery, Event
from integrations.models import Installation
from integrations.policies import acts_at_level, installation_has_scope
from integrations.routing_selectors import recipient_of

from .models import BulkRedelivery, DeliveryAttempt, EndpointState, Replay, SigningSecret
from .rules import PING, SELECTABLE_EVENTS, WEBHOOK_CONSUMER, WEBHOOK_INTEGRATION, wants_event


def is_webhook_installation(installation: Installation) -> bool:
    """A space or site installation of the webhook integration: the ones that send webhooks
    (the levels it registered with ``policies.register_acting_levels``)."""
    return installation.integration.name == WEBHOOK_INTEGRATION and acts_at_level(installation)[0]


def signing_secrets_in_overlap(installation: Installation) -> QuerySet:
    """The rotated-out secrets that still sign (their 24-hour overlap runs), newest first."""
    return SigningSecret.objects.filter(
        installation=installation, expires_at__gt=timezone.now()
    ).order_by("-expires_at")


# --- Endpoints ----------------------------------------------------------------------------------


def is_endpoint_disabled(installation_id: str) -> bool:
    """Whether the installation's endpoint is disabled (then no delivery is made to it)."""
    return EndpointState.objects.filter(pk=installation_id, disabled_at__isnull=False).exists()


#: How long a process trusts its list of disabled endpoints (seconds).
DISABLED_ENDPOINTS_TTL = 10.0
_disabled_endpoints: tuple[float, frozenset[str]] = (0.0, frozenset())


def maybe_disabled_endpoints() -> frozenset[str]:
    """The installations whose endpoints were disabled a moment ago (read at most every
    ``DISABLED_ENDPOINTS_TTL`` seconds per process): firing an event costs no query for
    the others. Not in it: enabled, or disabled since (its open deliveries are cancelled by
    the periodic task); in it: to be checked (``is_endpoint_disabled``), it may have been
    re-enabled since."""
    global _disabled_endpoints
    read_at, ids = _disabled_endpoints
    if time.monotonic() - read_at > DISABLED_ENDPOINTS_TTL:
        ids = frozenset(
            EndpointState.objects.filter(disabled_at__isnull=False).values_list("pk", flat=True)
        )
        _disabled_endpoints = (time.monotonic(), ids)
    return ids


def disabled_endpoints_forget() -> None:
    """Read the disabled endpoints afresh next time (this process disabled or re-enabled
    one)."""
    global _disabled_endpoints
    _disabled_endpoints = (0.0, frozenset())


def endpoint_state(installation: Installation) -> EndpointState | None:
    """The endpoint's state row (None: never disabled)."""
    return EndpointState.objects.filter(pk=installation.pk).select_related("reenabled_by").first()


def disabled_endpoints(organization, installation_ids=None) -> QuerySet:
    """The organization's disabled endpoints (of these installations, if given)."""
    states = EndpointState.objects.filter(
        installation__organization=organization, disabled_at__isnull=False
    ).select_related("installation__integration", "installation__space", "installation__site")
    if installation_ids is not None:
        states = states.filter(pk__in=list(installation_ids))
    return states.order_by("disabled_at")


# --- Events an installation may receive --------------------------------------------------------


def receivable_event_types(installation: Installation) -> list[str]:
    """The event types a test event of the installation may have: ``ping``, and the events
    of its level that it forwards (the consumer's ``wants_event``: switched on in its
    configuration) and whose scope it acts with (``policies.installation_has_scope``)."""
    recipient = recipient_of(installation)
    forwarded = [
        event_type
        for event_type in SELECTABLE_EVENTS.get(installation.level, ())
        if wants_event(recipient, event_type)
        and (
            EVENT_SCOPES[event_type] is None
            or installation_has_scope(installation, EVENT_SCOPES[event_type])
        )
    ]
    return [PING, *forwarded]


def logged_event_types(installation: Installation) -> list[str]:
    """The event types the installation's delivery log may hold (the list's filter)."""
    return [PING, *SELECTABLE_EVENTS.get(installation.level, ())]


# --- The delivery log ---------------------------------------------------------------------------


def webhook_deliveries(installation: Installation) -> QuerySet:
    """The installation's webhook deliveries, newest first."""
    return (
        Delivery.objects.filter(installation=installation, consumer=WEBHOOK_CONSUMER)
        .select_related("event")
        .order_by("-created_at", "-id")
    )


def delivery_log(
    installation: Installation,
    *,
    status: str = "",
    event_type: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet:
    """The installation's deliveries, filtered (each filter only when given), newest first,
    each with its last attempt's status code (``last_status_code``)."""
    deliveries = webhook_deliveries(installation)
    if status:
        deliveries = deliveries.filter(status=status)
    if event_type:
        deliveries = deliveries.filter(event__type=event_type)
    if since is not None:
        deliveries = deliveries.filter(created_at__gte=since)
    if until is not None:
        deliveries = deliveries.filter(created_at__lt=until)
    return deliveries


def last_status_codes(deliveries) -> dict[int, int | None]:
    """Delivery id -> the status code of its latest attempt (None: a network error)."""
    latest = {}
    rows = (
        DeliveryAttempt.objects.filter(delivery__in=[d.pk for d in deliveries])
        .order_by("delivery_id", "chain", "number")
        .values_list("delivery_id", "status_code")
    )
    for delivery_id, status_code in rows:
        latest[delivery_id] = status_code
    return latest


def is_delivery_waiting(delivery_id: int) -> bool:
    """Whether a webhook delivery is open and held by no worker (its lease, if any, ran out):
    what a retry's task asks a drain for."""
    return (
        Delivery.objects.filter(
            pk=delivery_id, consumer=WEBHOOK_CONSUMER, status__in=Delivery.OPEN_STATUSES
        )
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=timezone.now()))
        .exists()
    )


def installation_delivery(installation: Installation, delivery_id) -> Delivery | None:
    """One of the installation's webhook deliveries (None: not one of its)."""
    return webhook_deliveries(installation).filter(pk=delivery_id).first()


def delivery_attempts(delivery: Delivery) -> list[DeliveryAttempt]:
    """Every attempt of the delivery, every chain, oldest first."""
    return list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("chain", "number"))


def hourly_outcomes(installation: Installation, *, now: datetime | None = None) -> list[dict]:
    """Succeeded and failed deliveries per hour over the last 24 hours, oldest hour first:
    ``{"hour", "succeeded", "failed"}`` for each of the 24 hours (by completion time)."""
    now = now or timezone.now()
    current = now.replace(minute=0, second=0, microsecond=0)
    hours = [current - timedelta(hours=back) for back in range(23, -1, -1)]
    rows = (
        webhook_deliveries(installation)
        .filter(
            completed_at__gte=hours[0],
            status__in=[Delivery.Status.SUCCEEDED, Delivery.Status.FAILED],
        )
        .annotate(hour=TruncHour("completed_at", tzinfo=UTC))
        .order_by()
        .values("hour", "status")
        .annotate(count=Count("id"))
    )
    counts = {(row["hour"], row["status"]): row["count"] for row in rows}
    return [
        {
            "hour": hour,
            "succeeded": counts.get((hour, Delivery.Status.SUCCEEDED), 0),
            "failed": counts.get((hour, Delivery.Status.FAILED), 0),
        }
        for hour in hours
    ]


# --- Bulk redeliveries --------------------------------------------------------------------------


def failed_deliveries_since(installation: Installation, since: datetime) -> QuerySet:
    """The installation's failed deliveries that finished at or after ``since``, oldest
    first (the order a bulk redelivery sends them in)."""
    return Delivery.objects.filter(
        installation=installation,
        consumer=WEBHOOK_CONSUMER,
        status=Delivery.Status.FAILED,
        completed_at__gte=since,
    ).order_by("completed_at", "id")


def latest_bulk_redelivery(installation: Installation) -> BulkRedelivery | None:
    return BulkRedelivery.objects.filter(installation=installation).first()


def delivery_status_counts(delivery_ids) -> dict[str, int]:
    """How many of these deliveries are in each status (a job's progress)."""
    return dict(
        Delivery.objects.filter(pk__in=delivery_ids)
        .order_by()
        .values_list("status")
        .annotate(count=Count("id"))
    )


def bulk_redelivery_progress(job: BulkRedelivery) -> dict:
    """How far a bulk redelivery is: ``done`` of ``total`` sent again (``skipped``: no longer
    failed when their turn came), and what became of them so far."""
    statuses = delivery_status_counts(job.delivery_ids)
    return {
        "id": job.pk,
        "total": job.total,
        "done": job.done,
        "skipped": job.skipped,
        "finished": job.finished_at is not None,
        "since": job.since,
        "succeeded": statuses.get(Delivery.Status.SUCCEEDED, 0),
        "failed": statuses.get(Delivery.Status.FAILED, 0),
        "open": sum(statuses.get(status, 0) for status in Delivery.OPEN_STATUSES),
    }


# --- Replays ------------------------------------------------------------------------------------


def replay_events(
    installation: Installation, *, since: datetime, until: datetime, include_delivered: bool
) -> QuerySet:
    """The events fired in [since, until) that the installation should have received, oldest
    first: of the types it forwards now (switched on, with their scope: as a test event's),
    in its space or site, fired since it was installed, never a test event (``trigger``'s,
    Send test event's: fired to one installation alone); of these, those it did not get (no
    delivery, or one cancelled or failed) or, with ``include_delivered``, those it got too.
    Never one whose delivery is in progress."""
    types = [
        event_type for event_type in receivable_event_types(installation) if event_type != PING
    ]
    where = (
        {"site_id": installation.site_id}
        if installation.level == "site"
        else {"space_id": installation.space_id}
    )
    deliveries = Delivery.objects.filter(event=OuterRef("pk"), installation=installation)
    events = Event.objects.filter(
        organization_id=installation.organization_id,
        test=False,  # a sample event stays with the installation it was fired to
        type__in=types,
        created_at__gte=max(since, installation.created_at),
        created_at__lt=until,
        **where,
    ).exclude(Exists(deliveries.filter(status__in=Delivery.OPEN_STATUSES)))
    if not include_delivered:
        events = events.exclude(Exists(deliveries.filter(status=Delivery.Status.SUCCEEDED)))
    return events.order_by("created_at", "id")


def replay_deliveries_of(installation: Installation, event_ids: list[str]) -> dict[str, Delivery]:
    """Event id -> the installation's delivery of it, for those it has one of."""
    return {
        delivery.event_id: delivery
        for delivery in Delivery.objects.filter(installation=installation, event_id__in=event_ids)
    }


def replays(installation: Installation) -> QuerySet:
    """The installation's replays, newest first."""
    return Replay.objects.filter(installation=installation).select_related("requested_by")


def installation_replay(installation: Installation, replay_id) -> Replay | None:
    return replays(installation).filter(pk=replay_id).first()


def active_replay(installation: Installation) -> Replay | None:
    return replays(installation).filter(status__in=Replay.ACTIVE_STATUSES).first()


def replay_has_open_deliveries(replay: Replay) -> bool:
    """Whether what the replay queued is still being sent (its next batch waits for it)."""
    return Delivery.objects.filter(
        pk__in=replay.delivery_ids, status__in=Delivery.OPEN_STATUSES
    ).exists()


def replay_progress(replay: Replay) -> dict:
    """How far a replay is: ``queued`` of ``found`` events handled (``skipped``: delivered
    or in progress meanwhile), and what became of the deliveries it queued so far."""
    statuses = delivery_status_counts(replay.delivery_ids)
    return {
        "id": replay.pk,
        "status": replay.status,
        "since": replay.since,
        "until": replay.until,
        "include_delivered": replay.include_delivered,
        "matched": replay.matched,
        "found": replay.found,
        "queued": replay.queued,
        "skipped": replay.skipped,
        "succeeded": statuses.get(Delivery.Status.SUCCEEDED, 0),
        "failed": statuses.get(Delivery.Status.FAILED, 0),
        "cancelled": statuses.get(Delivery.Status.CANCELLED, 0),
        "open": sum(statuses.get(status, 0) for status in Delivery.OPEN_STATUSES),
        "requested_by": replay.requested_by.get_username() if replay.requested_by else None,
        "created_at": replay.created_at,
        "finished_at": replay.finished_at,
        "active": replay.is_active,
    }
