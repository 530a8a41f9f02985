"""Visitor authentication and adaptive content together, as a visitor meets them: the claims
of the visitor token a site's sign-in integration signed decide which pages and sections they
read and find, through the site's own session."""

import pytest
from django.test import Client

from docplatform.revisions import space_content_update
from docplatform.sites import site_services

from .visitor_support import home, token_for

PRO = 'visitor.claims.plan == "pro"'
PAGES = [
    {"path": "intro", "title": "Introduction", "body": "Installing takes a minute."},
    {"path": "exports", "title": "Exports", "body": "Zeppelin exports.", "condition": PRO},
    {
        "path": "limits",
        "title": "Limits",
        "body": f"Ten reports a day.\n\n```adaptive {PRO}\nUnlimited dirigible reports.\n```\n",
    },
]


@pytest.fixture
def adaptive(handbook, org_admin):
    space_content_update(space=handbook, pages=PAGES, message="Plans", author=org_admin)
    handbook.refresh_from_db()
    return handbook


def visitor_with(sites_client, site, claims: dict):
    answer = sites_client.get(home(site), {"visitor_token": token_for(site, claims)})
    assert answer.status_code == 302
    return sites_client


@pytest.fixture
def sites_client(sites_host):
    return Client(HTTP_HOST=sites_host)


@pytest.mark.slow
@pytest.mark.parametrize(("plan", "shown"), [("pro", True), ("free", False)])
def test_the_token_claims_decide_the_page_its_sections_and_search(
    sites_client, locked, adaptive, plan, shown
):
    visitor = visitor_with(sites_client, locked, {"sub": "v1", "plan": plan})
    exports = visitor.get(f"/{locked.pk}/{adaptive.pk}/exports")
    assert exports.status_code == (200 if shown else 404)
    limits = visitor.get(f"/{locked.pk}/{adaptive.pk}/limits")
    assert limits.status_code == 200
    assert (b"Unlimited dirigible reports." in limits.content) is shown
    for word, path in [("zeppelin", "exports"), ("dirigible", "limits")]:
        found = visitor.get(f"/{locked.pk}/search", {"q": word})
        assert found.status_code == 200
        assert (f"/{adaptive.pk}/{path}".encode() in found.content) is shown, word


def test_a_visitor_of_a_public_site_has_no_claims(sites_client, site, adaptive, org_admin):
    site_services.site_update(site=site, actor=org_admin, audience="public")
    assert sites_client.get(f"/{site.pk}/{adaptive.pk}/exports").status_code == 404
    assert sites_client.get(f"/{site.pk}/{adaptive.pk}/intro").status_code == 200
