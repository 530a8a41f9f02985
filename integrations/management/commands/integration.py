"""``python manage.py integration ACTION``: the integration command line.

Exit codes: 0 success (warnings may be printed), 1 the manifest or request was refused,
2 a usage error (bad arguments, a path or env file that does not exist).
"""

import os
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError
from dotenv import dotenv_values

from integrations.services import integration_publish, manifest_check

EXIT_REFUSED = 1
EXIT_USAGE = 2


def usage_error(message: str) -> CommandError:
    return CommandError(message, returncode=EXIT_USAGE)


class Command(BaseCommand):
    help = "Check and publish integrations."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        check = actions.add_parser("check", help="Validate a manifest and report every problem.")
        self._add_path_arguments(check)

        publish = actions.add_parser("publish", help="Check and publish a new version.")
        self._add_path_arguments(publish)
        publish.add_argument(
            "--as", dest="username", required=True, help="The publishing user (an org admin)."
        )

    @staticmethod
    def _add_path_arguments(parser):
        parser.add_argument(
            "path", nargs="?", default=".", help="Integration folder or manifest file (default .)"
        )
        parser.add_argument(
            "--env-file",
            help="A dotenv file resolving ${{ env.NAME }} secrets; its values win over the "
            "process environment.",
        )

    def handle(self, *args, action, **options):
        return getattr(self, f"handle_{action}")(**options)

    # --- actions ----------------------------------------------------------------------------

    def handle_check(self, *, path, env_file, **options):
        result = manifest_check(self._existing_path(path), env=self._secrets_env(env_file))
        self._print_warnings(result.warnings)
        if not result.ok:
            for problem in result.errors:
                self.stdout.write(str(problem))
            raise CommandError(
                f"{len(result.errors)} problem(s) found in the manifest", returncode=EXIT_REFUSED
            )
        manifest = result.manifest
        self.stdout.write(self.style.SUCCESS(f"{manifest.name}: the manifest is valid"))

    def handle_publish(self, *, path, env_file, username, **options):
        publisher = self._user(username)
        try:
            result = integration_publish(
                path=self._existing_path(path), publisher=publisher, env=self._secrets_env(env_file)
            )
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                for message in messages:
                    self.stdout.write(f"{field}: {message}")
            raise CommandError("publishing was refused", returncode=EXIT_REFUSED) from exc
        except PermissionDenied as exc:
            raise CommandError(str(exc), returncode=EXIT_REFUSED) from exc
        self._print_warnings(result.warnings)
        version = result.version
        if result.created:
            self.stdout.write(
                self.style.SUCCESS(f"published {version.integration.name} version {version.number}")
            )
        else:
            self.stdout.write(
                f"{version.integration.name} is unchanged: version {version.number} stays current"
            )

    # --- helpers ----------------------------------------------------------------------------

    def _print_warnings(self, warnings):
        for problem in warnings:
            self.stdout.write(self.style.WARNING(f"warning: {problem}"))

    @staticmethod
    def _existing_path(path: str) -> Path:
        resolved = Path(path)
        if not resolved.exists():
            raise usage_error(f"{path}: no such file or folder")
        return resolved

    @staticmethod
    def _secrets_env(env_file: str | None) -> dict[str, str]:
        env = dict(os.environ)
        if env_file is not None:
            if not Path(env_file).is_file():
                raise usage_error(f"--env-file {env_file}: no such file")
            env.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
        return env

    @staticmethod
    def _user(username: str):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise usage_error(f"--as {username}: no active user with that username")
        return user
