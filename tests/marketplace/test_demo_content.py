"""The demo's pages: their links are the configured platform's, never a hard-coded port, and
what they say holds on a published site too (a site's visitor has no Edit button)."""

import io
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from docplatform.models import Page, Site

pytestmark = pytest.mark.django_db

PLATFORM = "https://docs.example.test"


def test_the_demo_pages_use_the_configured_addresses_and_hold_on_a_site(settings):
    settings.PLATFORM_URL = PLATFORM
    call_command("seed_demo", stdout=io.StringIO())
    bodies = "\n".join(Page.objects.values_list("body", flat=True))
    assert ":8000" not in bodies
    assert "127.0.0.1" not in bodies
    assert f"{PLATFORM}/api/v1/spaces/" in bodies
    assert "Press **Edit**" not in bodies

    site = Site.objects.get(organization__subdomain="acme")
    guide = site.spaces.get(title="Product guide")
    visitor = Client(HTTP_HOST=urlsplit(settings.SITES_URL).netloc)
    page = visitor.get(f"/{site.pk}/{guide.pk}/getting-started")
    assert page.status_code == 200
    assert f'href="{PLATFORM}/s/"' in page.content.decode()


def test_the_demo_pages_are_found_by_the_sites_search():
    from docplatform.sites.selectors import site_search

    call_command("seed_demo", stdout=io.StringIO())
    site = Site.objects.get(organization__subdomain="acme")
    hits = site_search(site, "space")
    assert hits, "the demo's site finds nothing: its pages are not in the search index"
    assert any(hit.page.path == "getting-started" for hit in hits)
