"""``python manage.py webhooks ACTION``: operators' view of webhook installations.

It acts as the operator, whoever holds the shell (``operators.OPERATOR``: no organization's
roles apply, and the audit log records "operator" for a rotated secret). An organization's
admins do the same through the marketplace and the REST API."""

import time
from datetime import UTC, datetime

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from docplatform.events.models import Delivery
from integrations.models import Installation
from integrations.operators import OPERATOR
from integrations.services.deliveries import installation_delivery_redeliver
from webhooks.models import Replay
from webhooks.rules import WEBHOOK_INTEGRATION
from webhooks.selectors import replay_progress
from webhooks.services.ping import webhook_ping
from webhooks.services.replay import replay_request
from webhooks.services.signing_secrets import webhook_secret_read, webhook_secret_rotate


class Command(BaseCommand):
    help = (
        "Webhook signing secrets, deliveries, redelivery, replays and test pings, as the "
        "operator (no organization's roles apply; the audit log records the operator)."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        for name, text in [
            ("secret", "Print the installation's current signing secret (as its scheme takes it)."),
            ("rotate-secret", "Make a new signing secret; the old one signs for 24 more hours."),
            ("ping", "Send a test ping to the installation's URL."),
        ]:
            actions.add_parser(name, help=text).add_argument("installation")
        deliveries = actions.add_parser("deliveries", help="List webhook deliveries.")
        deliveries.add_argument("--installation", help="Only this installation's deliveries.")
        deliveries.add_argument("--limit", type=int, default=50)
        redeliver = actions.add_parser("redeliver", help="Send a delivery again (same eventId).")
        redeliver.add_argument("delivery", type=int)
        replay = actions.add_parser(
            "replay",
            help="Send the installation the events of a time range it did not get (paused or "
            "disabled), each once, with the eventId of its delivery to it.",
        )
        replay.add_argument("installation")
        replay.add_argument("--since", type=_time, required=True, help="ISO 8601; UTC if naive.")
        replay.add_argument("--until", type=_time, default=None, help="ISO 8601; default: now.")
        replay.add_argument(
            "--include-delivered", action="store_true", help="Also the events it got."
        )
        replay.add_argument(
            "--wait", action="store_true", help="Wait until it is done, printing its progress."
        )

    def handle(self, *args, action, **options):
        return getattr(self, "handle_" + action.replace("-", "_"))(**options)

    def handle_secret(self, *, installation, **options):
        installation = self._installation(installation)
        self.stdout.write(webhook_secret_read(user=OPERATOR, installation=installation))

    def handle_rotate_secret(self, *, installation, **options):
        installation = self._installation(installation)
        self.stdout.write(webhook_secret_rotate(user=OPERATOR, installation=installation))

    def handle_ping(self, *, installation, **options):
        event = webhook_ping(installation=self._installation(installation))
        delivery = event.deliveries.first()
        if delivery is None:
            raise CommandError("the installation is paused: no ping was sent", returncode=1)
        self.stdout.write(f"ping queued as delivery {delivery.pk} (eventId {delivery.event_uuid})")

    def handle_deliveries(self, *, installation, limit, **options):
        deliveries = Delivery.objects.filter(consumer="webhook").select_related("event")
        if installation:
            deliveries = deliveries.filter(installation_id=installation)
        self.stdout.write(f"{'id':>8}  {'event':<22} {'status':<10} {'attempts':>8}  outcome")
        for delivery in deliveries.order_by("-created_at", "-id")[:limit]:
            self.stdout.write(
                f"{delivery.pk:>8}  {delivery.event.type:<22} {delivery.status:<10} "
                f"{delivery.attempts:>8}  {delivery.outcome or delivery.last_error}"
            )

    def handle_redeliver(self, *, delivery, **options):
        row = Delivery.objects.filter(pk=delivery, consumer="webhook").first()
        if row is None:
            raise CommandError(f"{delivery}: no such webhook delivery", returncode=2)
        try:
            row = installation_delivery_redeliver(user=OPERATOR, delivery=row)
        except ValidationError as exc:
            raise CommandError(exc.messages[0], returncode=1) from exc
        self.stdout.write(f"delivery {row.pk} queued again (attempt chain {row.chain})")

    def handle_replay(self, *, installation, since, until, include_delivered, wait, **options):
        try:
            job = replay_request(
                user=OPERATOR,
                installation=self._installation(installation),
                since=since,
                until=until or timezone.now(),
                include_delivered=include_delivered,
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
            )
            raise CommandError(problems, returncode=1) from exc
        more = f" (of {job.matched}: at most the limit)" if job.matched > job.found else ""
        self.stdout.write(f"replay {job.pk}: {job.found} events found{more}")
        while wait and job.is_active:
            time.sleep(0.5)
            job.refresh_from_db()
        if wait:
            progress = replay_progress(job)
            self.stdout.write(
                f"replay {job.pk} {job.status}: {job.queued} of {job.found} queued, "
                f"{job.skipped} skipped; {progress['succeeded']} succeeded, "
                f"{progress['failed']} failed, {progress['open']} in progress"
            )
            if job.status != Replay.Status.DONE:
                raise CommandError(f"replay {job.pk} is {job.status}", returncode=1)

    @staticmethod
    def _installation(installation_id: str) -> Installation:
        installation = (
            Installation.objects.filter(pk=installation_id, integration__name=WEBHOOK_INTEGRATION)
            .exclude(level=Installation.Level.ORGANIZATION)
            .first()
        )
        if installation is None:
            raise CommandError(f"{installation_id}: no such webhook installation", returncode=2)
        return installation


def _time(value: str) -> datetime:
    """An ISO 8601 time (a date alone: its midnight), UTC when it names no offset."""
    parsed = parse_datetime(value) or parse_datetime(f"{value}T00:00")
    if parsed is None:
        raise ValueError(value)
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)
