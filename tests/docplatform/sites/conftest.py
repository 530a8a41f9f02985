"""A site of acme publishing spaces of each visibility, and a client on the sites origin."""

from urllib.parse import urlsplit

import pytest
from django.test import Client

from docplatform.revisions import space_content_update
from docplatform.sites import site_services
from tests.factories import SiteFactory, SpaceFactory

from .visitor_support import SIGNER, install_on_site, publish_site_integration

HANDBOOK = [
    {"path": "intro", "title": "Introduction", "body": "# Welcome\n\nInstalling takes a minute.\n"},
    {"path": "guide", "title": "Guide", "body": "Read **this** first."},
    {"path": "guide/install", "title": "Install", "body": "Run the installer."},
]
BROWSER = {"HTTP_USER_AGENT": "Mozilla/5.0 (Site test)", "REMOTE_ADDR": "198.51.100.7"}


def space_with(organization, title: str, visibility: str, pages: list[dict]):
    space = SpaceFactory(organization=organization, title=title, visibility=visibility)
    space_content_update(space=space, pages=pages, message="First pages")
    space.refresh_from_db()
    return space


@pytest.fixture
def handbook(organization):
    return space_with(organization, "Handbook", "public", HANDBOOK)


@pytest.fixture
def unlisted(organization):
    pages = [{"path": "notes", "title": "Release notes", "body": "Secret handshake."}]
    return space_with(organization, "Unlisted notes", "unlisted", pages)


@pytest.fixture
def private(organization):
    pages = [{"path": "plans", "title": "Plans", "body": "Internal roadmap."}]
    return space_with(organization, "Internal", "private", pages)


@pytest.fixture
def site(organization, handbook, unlisted, private):
    site = SiteFactory(organization=organization, title="Acme docs")
    site.spaces.add(handbook, unlisted, private)
    return site


@pytest.fixture
def sites_host(settings) -> str:
    return urlsplit(settings.SITES_URL).netloc


@pytest.fixture
def visitor(sites_host):
    """A browser on the sites origin."""
    return Client(HTTP_HOST=sites_host, **BROWSER)


@pytest.fixture
def signer(tmp_path, org_admin, site):
    integration = publish_site_integration(
        tmp_path / "signer", org_admin, name="signer", scopes=["site:visitor:auth"], code=SIGNER
    )
    return install_on_site(integration, org_admin, site)


@pytest.fixture
def locked(site, signer, org_admin):
    """The site, for signed-in visitors only, through ``signer``."""
    site_services.site_update(
        site=site, actor=org_admin, audience="authenticated", auth_installation=signer.pk
    )
    site.refresh_from_db()
    return site
