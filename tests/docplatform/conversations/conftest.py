"""acme with a space of pages, an installation that holds ``conversations:ingest``, one that
does not, and globex's installation that holds it."""

import pytest

from docplatform.revisions import space_content_update
from integrations.services.installations import installation_create
from tests.factories import IntegrationFactory, MembershipFactory, OrganizationFactory, SpaceFactory

SCOPE = "conversations:ingest"


def installed(organization, admin, *, name: str, scopes: list[str]):
    integration = IntegrationFactory(
        organization=organization, name=name, title=name.title(), scopes=scopes
    )
    return installation_create(user=admin, integration=integration, organization=organization)


@pytest.fixture
def helpdesk(organization, org_admin):
    """acme's installation of a support tool holding the scope."""
    return installed(organization, org_admin, name="helpdesk", scopes=[SCOPE])


@pytest.fixture
def reader_bot(organization, org_admin):
    """acme's installation of an integration without the scope."""
    return installed(organization, org_admin, name="reader-bot", scopes=["space:content:read"])


@pytest.fixture
def globex_helpdesk(db):
    globex = OrganizationFactory(subdomain="globex", title="Globex")
    admin = MembershipFactory(organization=globex, role="admin").user
    return installed(globex, admin, name="globex-desk", scopes=[SCOPE])


@pytest.fixture
def guide(organization, org_admin):
    """acme's space with a page about webhook secrets and one about sites."""
    space = SpaceFactory(organization=organization, title="Guide")
    space_content_update(
        space=space,
        author=org_admin,
        pages=[
            {
                "path": "webhooks/secrets",
                "title": "Rotating a webhook signing secret",
                "body": "Open the webhook's installation and press Rotate: the signing secret "
                "changes, and for a day both secrets sign.",
            },
            {
                "path": "sites",
                "title": "Publishing a site",
                "body": "Tick the spaces a site publishes and mark it published.",
            },
        ],
    )
    return space
