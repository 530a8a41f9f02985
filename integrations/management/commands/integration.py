"""``python manage.py integration ACTION``: the integration command line.

``review`` is an operator's (whoever holds the shell, as at the admin): it names no person.
Every other action that changes something acts as the person named by ``--as``, under the same
rules as the marketplace and the REST API (the roles' table: publishing, installing,
configuring, pausing, resuming and uninstalling are for the organization's admins), and the
audit log records that person.

Exit codes: 0 success (warnings may be printed), 1 the manifest or request was refused,
2 a usage error (bad arguments, a path or env file that does not exist).
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404
from docplatform_sdk.authoring.values import values_from_texts
from docplatform_sdk.cli import (
    EXIT_REFUSED,
    EXIT_USAGE,
    Refused,
    UsageError,
    add_new_arguments,
    add_path_arguments,
    existing_path,
    print_warnings,
    report,
    scaffold,
    secrets_environment,
)

from docplatform.models import Site, Space
from docplatform.selectors import organization_by_ref
from integrations.gateway.failures import CodeChecksUnavailable, RuntimeFailure
from integrations.operators import OPERATOR
from integrations.policies import configuration_definition, definition_for_level, effective_status
from integrations.selectors import (
    installations_visible_to,
    integrations_visible_to,
    published_integration,
)
from integrations.services import integration_publish_folder, manifest_check
from integrations.services.installations import (
    installation_configure,
    installation_create,
    installation_pause,
    installation_resume,
    installation_uninstall,
)
from integrations.services.publishing import code_checked
from integrations.services.reviews import (
    APPROVE,
    REJECT,
    listing_review_decide,
    pending_review_of,
)


def usage_error(message: str) -> CommandError:
    return CommandError(message, returncode=EXIT_USAGE)


class Command(BaseCommand):
    help = "Check, publish, install and manage integrations and their installations."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        add_new_arguments(actions.add_parser("new", help="Scaffold a new integration folder."))

        check = actions.add_parser("check", help="Validate a manifest and report every problem.")
        add_path_arguments(check)

        publish = actions.add_parser("publish", help="Check and publish a new version.")
        add_path_arguments(publish)
        self._add_user_argument(publish, "The publishing user (an admin of the organization).")

        install = actions.add_parser("install", help="Install an integration.")
        install.add_argument("name", help="The integration's name.")
        install.add_argument("--org", required=True, help="The installing organization.")
        where = install.add_mutually_exclusive_group()
        where.add_argument("--space", help="Install into this space (id).")
        where.add_argument("--site", help="Install into this site (id).")
        install.add_argument("--token", help="The install link token of an unlisted integration.")
        self._add_set_argument(install)
        self._add_user_argument(
            install,
            "The installing user: an admin of --org (a member, for an integration whose "
            "scopes write nothing, when --org lets members install).",
        )

        configure = actions.add_parser("configure", help="Edit an installation's configuration.")
        configure.add_argument("installation", help="The installation id.")
        self._add_set_argument(configure)
        self._add_user_argument(configure, "The user making the edit (an admin).")

        for action, text in [
            ("pause", "Pause an installation: no events reach it."),
            ("resume", "Resume a paused installation (its configuration is validated again)."),
            ("uninstall", "Remove an installation (and those under it)."),
        ]:
            parser = actions.add_parser(action, help=text)
            parser.add_argument("installation", help="The installation id.")
            self._add_user_argument(parser, "The user acting (an admin).")

        review = actions.add_parser(
            "review",
            help="Approve or reject the public listing of an integration's newest version "
            "waiting for review (an operator's command: it names no person).",
        )
        review.add_argument("name", help="The integration's name.")
        decision = review.add_mutually_exclusive_group(required=True)
        decision.add_argument(
            "--approve", action="store_true", help="Other organizations see and install it."
        )
        decision.add_argument(
            "--reject",
            metavar="REASON",
            help="Keep it its owners' alone; REASON is mailed to them.",
        )

    @staticmethod
    def _add_user_argument(parser, text):
        parser.add_argument("--as", dest="username", required=True, help=text)

    @staticmethod
    def _add_set_argument(parser):
        parser.add_argument(
            "--set",
            # Not "settings": that is Django's own --settings option, which every command has.
            dest="values",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="A configuration value (repeatable); an empty VALUE unsets the property.",
        )

    def handle(self, *args, action, **options):
        try:
            return getattr(self, f"handle_{action}")(**options)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                for message in messages:
                    self.stdout.write(f"{field}: {message}")
            raise CommandError(f"{action} was refused", returncode=EXIT_REFUSED) from exc
        except (PermissionDenied, Http404) as exc:
            raise CommandError(str(exc), returncode=EXIT_REFUSED) from exc
        except CodeChecksUnavailable as exc:
            # check has nothing to publish: it says only what stopped it.
            reason = exc.reason if action == "check" else exc.message
            raise CommandError(
                f"{reason} (RUNTIME_URL {settings.RUNTIME_URL})", returncode=EXIT_REFUSED
            ) from exc
        except RuntimeFailure as exc:  # publish: a runtime call failed
            raise CommandError(
                f"{exc.message} (RUNTIME_URL {settings.RUNTIME_URL})", returncode=EXIT_REFUSED
            ) from exc
        except UsageError as exc:  # the console script's helpers (docplatform_sdk.cli)
            raise usage_error(str(exc)) from exc
        except Refused as exc:
            raise CommandError(str(exc), returncode=EXIT_REFUSED) from exc

    # --- actions ----------------------------------------------------------------------------

    def handle_check(self, *, path, env_file, **options):
        result = manifest_check(existing_path(path), env=secrets_environment(env_file))
        if result.ok:  # then its code, loaded by the runtime host as publish does
            result = code_checked(result)
        report(result, say=self.stdout.write)
        self.stdout.write(self.style.SUCCESS(f"{result.manifest.name}: the manifest is valid"))

    def handle_publish(self, *, path, env_file, username, **options):
        publisher = self._user(username)
        result = integration_publish_folder(
            path=existing_path(path), publisher=publisher, env=secrets_environment(env_file)
        )
        print_warnings(result.warnings, say=self.stdout.write)
        version = result.version
        if result.created:
            self.stdout.write(
                self.style.SUCCESS(f"published {version.integration.name} version {version.number}")
            )
        else:
            self.stdout.write(
                f"{version.integration.name} is unchanged: version {version.number} stays current"
            )

    def handle_new(self, *, folder, name, organization, force, **options):
        written = scaffold(folder=folder, name=name, organization=organization, force=force)
        for path in written:
            self.stdout.write(f"created {path}")
        self.stdout.write(self.style.SUCCESS(f"next: docplatform-integration dev {folder}"))

    def handle_install(self, *, name, org, space, site, token, values, username, **options):
        user = self._user(username)
        organization = organization_by_ref(org)
        if organization is None:
            raise usage_error(f"--org {org}: no such organization")
        integration = integrations_visible_to(user, install_token=token).filter(name=name).first()
        if integration is None:
            raise CommandError(f"{name}: no such integration", returncode=EXIT_REFUSED)
        space_row = self._row(Space, space, "--space", organization)
        site_row = self._row(Site, site, "--site", organization)
        level = "space" if space else "site" if site else "organization"
        definition = definition_for_level(integration, level)
        installation = installation_create(
            user=user,
            integration=integration,
            organization=organization,
            space=space_row,
            site=site_row,
            configuration=self._changes(definition, values),
            install_token=token,
        )
        self._print_installation(installation)

    def handle_configure(self, *, installation, values, username, **options):
        user = self._user(username)
        installation = self._installation(installation, user)
        definition = configuration_definition(installation)
        if not values:
            raise usage_error("give at least one --set KEY=VALUE")
        installation = installation_configure(
            user=user,
            installation=installation,
            changes=self._changes(definition, values),
        )
        self._print_installation(installation)

    def handle_pause(self, *, installation, username, **options):
        user = self._user(username)
        row = self._installation(installation, user)
        self._print_installation(installation_pause(user=user, installation=row))

    def handle_resume(self, *, installation, username, **options):
        user = self._user(username)
        row = self._installation(installation, user)
        self._print_installation(installation_resume(user=user, installation=row))

    def handle_uninstall(self, *, installation, username, **options):
        user = self._user(username)
        row = self._installation(installation, user)
        installation_uninstall(user=user, installation=row)
        self.stdout.write(f"uninstalled {row.integration.name} ({installation})")

    # --- helpers ----------------------------------------------------------------------------

    def handle_review(self, *, name, approve, reject, **options):
        integration = published_integration(name)
        if integration is None:
            raise Refused(f"no integration is named {name!r}")
        review = pending_review_of(integration)
        if review is None:
            raise Refused(f"no version of {name} waits for review")
        decision, reason = (APPROVE, "") if approve else (REJECT, reject)
        review = listing_review_decide(
            user=OPERATOR, review=review, decision=decision, reason=reason
        )
        self.stdout.write(
            self.style.SUCCESS(f"{name} version {review.version.number}: {review.status}")
        )

    def _print_installation(self, installation):
        shown = effective_status(installation)
        self.stdout.write(f"{installation.id} {shown.status}")
        for reason in shown.reasons:
            self.stdout.write(f"  {reason['path']}: {reason['message']}")

    @staticmethod
    def _installation(installation_id: str, user):
        installation = (
            installations_visible_to(user)
            .select_related("integration")
            .filter(pk=installation_id)
            .first()
        )
        if installation is None:
            raise CommandError(f"{installation_id}: no such installation", returncode=EXIT_REFUSED)
        return installation

    @staticmethod
    def _row(model, pk, option, organization):
        if pk is None:
            return None
        row = model.objects.filter(pk=pk, organization=organization).first()
        if row is None:
            raise usage_error(
                f"{option} {pk}: no such {model._meta.verbose_name} in the organization"
            )
        return row

    @staticmethod
    def _changes(definition: dict, values: list[str]) -> dict:
        try:
            changes, problems = values_from_texts(definition, values)
        except ValueError as exc:
            raise usage_error(str(exc)) from exc
        if problems:
            raise ValidationError(problems)
        return changes

    @staticmethod
    def _user(username: str):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise usage_error(f"--as {username}: no active user with that username")
        return user
