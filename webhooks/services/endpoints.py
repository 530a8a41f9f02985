"""Disabling and re-enabling webhook endpoints.

An endpoint (a webhook installation's URL) whose every attempt failed for
``WEBHOOK_DISABLE_AFTER_DAYS`` is disabled with its reason by a periodic task: no delivery is
made to it any more (the consumer's ``endpoint_wants`` refuses new events) and its open
deliveries are cancelled with the reason. Its organization's admins see a banner and
re-enable it in one action (marketplace, REST API, Django admin); the failing streak then
starts anew.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, Min
from django.utils import timezone

from docplatform.access import Action
from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery
from integrations.models import Installation
from integrations.operators import acting
from integrations.policies import act_check

from ..models import DeliveryAttempt, EndpointState
from ..rules import WEBHOOK_CONSUMER, wants_event
from ..selectors import disabled_endpoints_forget, is_endpoint_disabled, maybe_disabled_endpoints

logger = logging.getLogger(__name__)

SUCCEEDED = "succeeded"


def endpoint_wants(recipient, event_type: str) -> bool:
    """The webhook consumer's ``wants``: the events the installation forwards
    (``wants_event``), unless its endpoint is disabled (checked with a query only for the
    endpoints ``maybe_disabled_endpoints`` names: firing costs no query for the others)."""
    if not wants_event(recipient, event_type):
        return False
    installation_id = recipient.installation_id
    return installation_id not in maybe_disabled_endpoints() or not is_endpoint_disabled(
        installation_id
    )


def endpoints_disable_failing() -> list[EndpointState]:
    """Disable every endpoint that failed every attempt for ``WEBHOOK_DISABLE_AFTER_DAYS``:
    it failed recently, and its first failure since its last success (or its re-enabling)
    is older than that. Also cancels what is still open to endpoints disabled before (a
    delivery a worker held at the time). Returns the endpoints disabled now."""
    now = timezone.now()
    cutoff = now - timedelta(days=settings.WEBHOOK_DISABLE_AFTER_DAYS)
    recently_failing = (
        DeliveryAttempt.objects.filter(delivery__consumer=WEBHOOK_CONSUMER, started_at__gte=cutoff)
        .exclude(outcome=SUCCEEDED)
        .exclude(delivery__installation__webhook_endpoint__disabled_at__isnull=False)
        .values_list("delivery__installation_id", flat=True)
        .distinct()
    )
    disabled = []
    for installation in Installation.objects.filter(pk__in=list(recently_failing)):
        reason = _failing_streak_reason(installation, cutoff)
        if reason:
            disabled.append(endpoint_disable(installation=installation, reason=reason))
    for state in EndpointState.objects.filter(disabled_at__isnull=False).exclude(
        installation__in=[state.installation_id for state in disabled]
    ):
        _open_deliveries_cancel(state.installation_id, state.disabled_reason)
    return disabled


def _failing_streak_reason(installation: Installation, cutoff) -> str:
    """Why the endpoint is to be disabled ("" when its failing streak started after
    ``cutoff``, or it has none)."""
    attempts = DeliveryAttempt.objects.filter(
        delivery__installation=installation, delivery__consumer=WEBHOOK_CONSUMER
    )
    starts = [attempts.filter(outcome=SUCCEEDED).aggregate(at=Max("started_at"))["at"]]
    state = EndpointState.objects.filter(pk=installation.pk).first()
    if state is not None:
        starts.append(state.reenabled_at)
    since = max((start for start in starts if start is not None), default=None)
    failing = attempts.exclude(outcome=SUCCEEDED)
    if since is not None:
        failing = failing.filter(started_at__gt=since)
    first = failing.aggregate(at=Min("started_at"))["at"]
    if first is None or first > cutoff:
        return ""
    last = failing.order_by("-started_at").first()
    detail = f"HTTP {last.status_code}" if last.status_code else last.error or last.outcome
    return (
        f"Every delivery attempt failed since {first:%d %b %Y %H:%M} UTC "
        f"({failing.count()} attempts; the last: {detail})"
    )[:500]


@transaction.atomic
def endpoint_disable(*, installation: Installation, reason: str) -> EndpointState:
    """Disable the endpoint with its reason and cancel its open deliveries."""
    state, _ = EndpointState.objects.select_for_update(no_key=True).get_or_create(
        installation=installation
    )
    state.disabled_at = timezone.now()
    state.disabled_reason = reason[:500]
    state.save(update_fields=["disabled_at", "disabled_reason"])
    logger.warning("webhook endpoint of %s disabled: %s", installation.pk, reason)
    disabled_endpoints_forget()
    transaction.on_commit(disabled_endpoints_forget)  # not what was read before the commit
    transaction.on_commit(lambda: _open_deliveries_cancel(installation.pk, reason))
    return state


def _open_deliveries_cancel(installation_id: str, reason: str) -> int:
    """Cancel the endpoint's open deliveries that no worker holds now (a held one is
    cancelled by the next run of the periodic task). Returns how many were cancelled."""
    cancelled = 0
    open_ids = Delivery.objects.filter(
        installation_id=installation_id,
        consumer=WEBHOOK_CONSUMER,
        status__in=Delivery.OPEN_STATUSES,
    ).values_list("pk", flat=True)
    for delivery_id in list(open_ids):
        delivery = delivery_claim(delivery_id)
        if delivery is not None:
            delivery_settle(delivery, Result.cancelled(reason=f"endpoint disabled: {reason}"))
            cancelled += 1
    return cancelled


@transaction.atomic
def endpoint_reenable(*, installation: Installation, by=None) -> EndpointState:
    """Re-enable a disabled endpoint: deliveries are made to it again from now on, and its
    failing streak starts anew. ``by``: who did it (None: an operator's command)."""
    state = EndpointState.objects.select_for_update(no_key=True).filter(pk=installation.pk).first()
    if state is None or state.disabled_at is None:
        raise ValidationError({"endpoint": ["the endpoint is not disabled"]})
    state.disabled_at = None
    state.reenabled_at = timezone.now()
    state.reenabled_by = by
    state.save(update_fields=["disabled_at", "reenabled_at", "reenabled_by"])
    disabled_endpoints_forget()
    transaction.on_commit(disabled_endpoints_forget)
    return state


def webhook_endpoint_reenable(*, user, installation: Installation) -> EndpointState:
    """Re-enable the endpoint, for an admin of the installing organization: re-enabling
    resumes its deliveries (``Action.PAUSE``, pause and resume)."""
    act_check(user, Action.PAUSE, installation)
    return endpoint_reenable(installation=installation, by=acting(user))
