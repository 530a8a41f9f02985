"""``python manage.py fire_event TYPE (--space ID | --site ID) [--set FIELD=VALUE ...]``."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from ... import events
from ...models import Site, Space
from ..operator_events import event_fire_by_operator


def field_value(text: str):
    """JSON when the text reads as JSON (numbers, true, objects), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class Command(BaseCommand):
    help = "Fire a platform event for a space or a site, as if it had happened."

    def add_arguments(self, parser):
        parser.add_argument("type", choices=events.SPACE_EVENTS + events.SITE_EVENTS)
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--space", help="The space (id) the event happens in.")
        where.add_argument("--site", help="The site (id) the event happens on.")
        parser.add_argument(
            "--set",
            dest="fields",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="Set a payload field, dotted for nested ones (visitor.ip=203.0.113.5).",
        )

    def handle(self, *args, type, space, site, fields, **options):
        overrides = {}
        for item in fields:
            key, sep, text = item.partition("=")
            if not sep or not key:
                raise CommandError(f"--set {item}: give FIELD=VALUE", returncode=2)
            overrides[key] = field_value(text)
        space_row = self._row(Space, space, "--space")
        site_row = self._row(Site, site, "--site")
        try:
            event = event_fire_by_operator(
                event_type=type, space=space_row, site=site_row, overrides=overrides
            )
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                for message in messages:
                    self.stdout.write(f"{field}: {message}")
            raise CommandError("the event was not fired", returncode=1) from exc
        count = event.deliveries.count()
        self.stdout.write(f"fired {event.type} {event.id} to {count} installation(s)")

    @staticmethod
    def _row(model, pk, option):
        if pk is None:
            return None
        row = model.objects.filter(pk=pk).first()
        if row is None:
            raise CommandError(f"{option} {pk}: no such {model._meta.verbose_name}", returncode=2)
        return row
