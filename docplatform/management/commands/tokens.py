"""``python manage.py tokens create|list|revoke --user NAME``: personal API tokens, for
operators.

``create`` prints the token alone on standard output (it is shown this once and stored only as
its hash) and what it made on standard error. Exit codes: 0 success, 1 refused (e.g. an empty
name, an expiry in the past), 2 a usage error (an unknown user or token, bad arguments).
"""

import argparse
import re
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from ...selectors import api_token_of, api_token_status, api_tokens_of
from ...services import api_token_create, api_token_revoke

EXIT_REFUSED = 1
EXIT_USAGE = 2


def usage_error(message: str) -> CommandError:
    return CommandError(message, returncode=EXIT_USAGE)


def positive_days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = 0
    if not 0 < days <= 36500:
        raise argparse.ArgumentTypeError(
            f"give a number of days from above 0 to 36500, not {text!r}"
        )
    return days


def token_id(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,18}", text):
        raise argparse.ArgumentTypeError(f"a token id is a number, not {text!r}")
    return int(text)


class Command(BaseCommand):
    help = "Create, list and revoke a user's personal API tokens."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        create = actions.add_parser("create", help="Make a token; it is printed once.")
        self._add_user_argument(create)
        create.add_argument("--name", required=True, help="What the token is for.")
        create.add_argument(
            "--expires-in",
            type=positive_days,
            metavar="DAYS",
            help="It stops working after DAYS days (default: never).",
        )

        listing = actions.add_parser("list", help="The user's tokens, newest first.")
        self._add_user_argument(listing)

        revoke = actions.add_parser("revoke", help="Revoke one of the user's tokens.")
        revoke.add_argument("token_id", type=token_id, metavar="ID", help="The token's id.")
        self._add_user_argument(revoke)

    @staticmethod
    def _add_user_argument(parser):
        parser.add_argument("--user", required=True, help="The token owner's username.")

    def handle(self, *args, action, user, **options):
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise usage_error(f"no user is named '{user}'")
        try:
            return getattr(self, f"handle_{action}")(owner, **options)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                for message in messages:
                    self.stdout.write(f"{field}: {message}")
            raise CommandError(f"{action} was refused", returncode=EXIT_REFUSED) from exc

    def handle_create(self, user, *, name, expires_in, **options):
        expires_at = timezone.now() + timedelta(days=expires_in) if expires_in else None
        token, raw = api_token_create(user=user, name=name, expires_at=expires_at)
        self.stdout.write(raw)
        until = token.expires_at.isoformat(timespec="seconds") if token.expires_at else "never"
        self.stderr.write(
            f"token {token.pk} '{token.name}' for {user.get_username()} (expires: {until}); "
            "it is shown this once"
        )

    def handle_list(self, user, **options):
        now = timezone.now()
        self.stdout.write("id\tstatus\thint\tcreated\texpires\tlast used\tname")
        for token in api_tokens_of(user):
            self.stdout.write(
                "\t".join(
                    [
                        str(token.pk),
                        api_token_status(token, now),
                        f"…{token.hint}",
                        _when(token.created_at),
                        _when(token.expires_at, "never"),
                        _when(token.last_used_at, "never"),
                        token.name,
                    ]
                )
            )

    def handle_revoke(self, user, *, token_id, **options):
        token = api_token_of(user, token_id)
        if token is None:
            raise usage_error(f"{user.get_username()} has no token {token_id}")
        api_token_revoke(token=token)
        self.stdout.write(f"token {token.pk} '{token.name}' is revoked")


def _when(moment, empty: str = "-") -> str:
    return moment.isoformat(timespec="seconds") if moment else empty
