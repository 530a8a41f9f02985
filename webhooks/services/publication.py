"""The webhook integration's publication and its settings checks (the events it forwards:
``webhooks.rules``)."""

from pathlib import Path

from django.contrib.auth import get_user_model

from docplatform.access import ADMIN
from docplatform.models import Organization
from docplatform.teams.services import membership_ensure
from integrations.services import integration_publish_folder
from integrations.services.publishing import OlderReleaseCode
from integrations.services.releases import integration_release

from ..rules import SELECTABLE_EVENTS
from ..transport.limits import limit_problems
from ..transport.outbound import UnsafeURL, check_url

MANIFEST_FOLDER = Path(__file__).resolve().parent.parent / "integration"
PLATFORM_ORGANIZATION = "platform"
PLATFORM_PUBLISHER = "platform-publisher"


def webhook_integration_publish() -> None:
    """Publish the built-in webhook integration, owned by the internal platform organization.

    Idempotent: publishing unchanged content creates no new version.
    """
    organization, _ = Organization.objects.get_or_create(
        subdomain=PLATFORM_ORGANIZATION, defaults={"title": "Platform", "internal": True}
    )
    publisher, created = get_user_model().objects.get_or_create(username=PLATFORM_PUBLISHER)
    if created:
        publisher.set_unusable_password()
        publisher.save(update_fields=["password"])
    membership_ensure(organization=organization, user=publisher, role=ADMIN)
    try:
        integration_publish_folder(path=MANIFEST_FOLDER, publisher=publisher, env={})
    except OlderReleaseCode as older:
        # The platform was deployed back to an older release: its manifest is the truth, so
        # that version is released again rather than start-up refused.
        integration_release(
            user=publisher, integration=older.version.integration, number=older.version.number
        )


def configuration_problems(level: str, configuration: dict) -> list[dict]:
    """The webhook settings' rules beyond their types: a callable URL, at least one event."""
    selectable = SELECTABLE_EVENTS.get(level)
    if selectable is None:
        return []  # the organization installation has nothing to configure
    problems = []
    url = configuration.get("url")
    if url is not None:
        try:
            check_url(url)
        except UnsafeURL as exc:
            problems.append({"path": "configuration.url", "message": str(exc)})
    problems += limit_problems(configuration)
    if not any(configuration.get(event) is True for event in selectable):
        problems.append(
            {
                "path": "configuration",
                "message": f"select at least one event ({', '.join(selectable)})",
            }
        )
    return problems
