import pytest
from django.test import Client
from django.urls import reverse

from integrations.models import Integration
from integrations.services.installations import installation_create
from tests.factories import (
    IntegrationAssetFactory,
    IntegrationFactory,
    MembershipFactory,
    OrganizationFactory,
    SiteFactory,
    SpaceFactory,
)

#: A configuration with one property of each type, as a manifest declares it.
CONFIGURATIONS = {
    "account": {
        "properties": {
            "channel": {"type": "string", "title": "Channel", "description": "Where to post."},
            "region": {
                "type": "string",
                "title": "Data region",
                "description": "Where the data is kept.",
                "enum": ["eu", "us"],
                "default": "eu",
            },
            "sample_rate": {
                "type": "number",
                "title": "Sample rate",
                "description": "Percent of views recorded.",
                "default": 100,
            },
            "mention_authors": {
                "type": "boolean",
                "title": "Mention authors",
                "description": "Name the author in messages.",
                "default": False,
            },
            "slack": {
                "type": "button",
                "title": "Slack workspace",
                "description": "The workspace that receives the messages.",
                "button_text": "Connect Slack",
                "callback_url": "/oauth",
            },
        },
        "required": ["channel"],
    },
    "space": {"properties": {"max_entries": {"type": "number", "title": "Entries"}}},
    "site": {
        "properties": {"tracking_id": {"type": "string", "title": "Tracking ID"}},
        "required": ["tracking_id"],
    },
}


@pytest.fixture
def globex(db):
    return OrganizationFactory(subdomain="globex", title="Globex")


@pytest.fixture
def globex_member(globex):
    return MembershipFactory(organization=globex).user


@pytest.fixture
def acme_space(organization):
    return SpaceFactory(organization=organization, title="Product guide")


@pytest.fixture
def acme_site(organization, acme_space):
    site = SiteFactory(organization=organization, title="Acme docs")
    site.spaces.add(acme_space)
    return site


@pytest.fixture
def globex_space(globex):
    return SpaceFactory(organization=globex, title="Globex guide")


@pytest.fixture
def globex_site(globex):
    return SiteFactory(organization=globex, title="Globex docs")


@pytest.fixture
def notifier(globex):
    """A public integration (of globex) with one configuration property of each type."""
    integration = IntegrationFactory(
        name="notifier",
        title="Notifier",
        organization=globex,
        visibility=Integration.Visibility.PUBLIC,
        categories=["collaboration"],
        scopes=["space:content:read", "space:metadata:read"],
        configurations=CONFIGURATIONS,
        summary="# Overview\nPosts a message.\n\n- on **every** change\n- <b>bold</b> stays text",
        external_links=[{"label": "Documentation", "url": "https://example.com/docs"}],
    )
    IntegrationAssetFactory(version=integration.latest_version)
    IntegrationAssetFactory(
        version=integration.latest_version, kind="preview", path="assets/preview.png"
    )
    return integration


@pytest.fixture
def acme_private(organization):
    return IntegrationFactory(
        name="acme-internal",
        title="Acme internal",
        organization=organization,
        visibility=Integration.Visibility.PRIVATE,
        categories=["content"],
        target="space",
        configurations=CONFIGURATIONS,
    )


@pytest.fixture
def globex_private(globex):
    integration = IntegrationFactory(
        name="globex-secret", organization=globex, visibility=Integration.Visibility.PRIVATE
    )
    IntegrationAssetFactory(version=integration.latest_version)
    return integration


@pytest.fixture
def globex_unlisted(globex):
    integration = IntegrationFactory(
        name="partner-search",
        title="Partner search",
        organization=globex,
        visibility=Integration.Visibility.UNLISTED,
        configurations=CONFIGURATIONS,
    )
    IntegrationAssetFactory(version=integration.latest_version)
    return integration


@pytest.fixture
def member_client(client, org_member):
    client.force_login(org_member)
    return client


@pytest.fixture
def hook(org_admin, organization, acme_space, receiver):
    """A webhook installation in acme's space, sending to the local receiver."""
    return installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=acme_space,
        configuration={"url": receiver.url, "space_content_updated": True},
    )


@pytest.fixture
def admin_client(org_admin):
    """A client of its own signed in as acme's admin (``client`` may be someone else)."""
    client = Client()
    client.force_login(org_admin)
    return client


def url(name, installation, *args, organization="acme"):
    """A marketplace page of an installation of ``organization``."""
    return reverse(f"marketplace:{name}", args=[organization, installation.pk, *args])


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]
