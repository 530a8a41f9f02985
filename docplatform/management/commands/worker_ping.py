"""Check that a Celery worker answers through the configured broker."""

import time

from django.core.management.base import BaseCommand, CommandError

from ...events.publisher import BrokerUnavailable
from ...selectors import worker_ping_answered
from ...services import worker_ping_request


class Command(BaseCommand):
    help = "Send a ping through the Celery broker and wait for a worker to answer it."

    def add_arguments(self, parser):
        parser.add_argument("--timeout", type=float, default=10.0, help="Seconds to wait.")

    def handle(self, *args, timeout, **options):
        try:
            ping = worker_ping_request()
        except BrokerUnavailable as exc:
            raise CommandError(f"the broker is unavailable ({exc})") from exc
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answered = worker_ping_answered(ping.pk)
            if answered is not None:
                elapsed = (answered.answered_at - answered.requested_at).total_seconds()
                self.stdout.write(f"worker {answered.worker} answered in {elapsed:.3f} s")
                return
            time.sleep(0.05)
        raise CommandError(f"no worker answered within {timeout:g} s")
