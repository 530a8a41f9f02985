"""``site:adaptive:read``: an installation token with it reads the claim names and conditions
of the sites in its reach (``GET /api/v1/sites/{id}/adaptive/``); without it, 403; the
organization's people read it too; and the consent screen says what it grants."""

import pytest

from docplatform.revisions import space_content_update
from marketplace.scopes import scope_label
from tests.api_helpers import API, api_client
from tests.factories import OrganizationFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db

PRO = 'visitor.claims.plan in ["pro", "team"]'
SECTION = 'visitor.claims.org.role == "admin" and visitor.claims.plan == "pro"'


@pytest.fixture
def site(organization):
    handbook = SpaceFactory(organization=organization, title="Handbook", visibility="public")
    space_content_update(
        space=handbook,
        pages=[
            {"path": "intro", "title": "Intro", "body": "Hello."},
            {"path": "pro", "title": "Pro", "body": "Pro things.", "condition": PRO},
            {
                "path": "keys",
                "title": "Keys",
                "body": f"Keys.\n\n```adaptive {SECTION}\nRotate them.\n```\n",
            },
        ],
    )
    internal = SpaceFactory(organization=organization, title="Internal", visibility="private")
    space_content_update(
        space=internal,
        pages=[
            {"path": "plans", "title": "Plans", "body": "x", "condition": "visitor.claims.staff"}
        ],
    )
    site = SiteFactory(organization=organization, title="Docs", published=True)
    site.spaces.add(handbook, internal)
    site.handbook = handbook
    return site


@pytest.fixture
def install(publish, org_admin, organization):
    def install_(scopes):
        from integrations.services.installations import installation_create

        integration = publish(org_admin, name="claims", scopes=scopes)
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization
        )
        return api_client(token=installation.api_token)

    return install_


def test_the_scope_reads_the_sites_claim_names_and_conditions(install, site):
    client = install(["site:adaptive:read"])
    response = client.get(f"{API}/sites/{site.pk}/adaptive/")
    assert response.status_code == 200, response.json()
    space = site.handbook.pk
    # The private space's condition is not the site's: its visitors never see that space.
    assert response.json() == {
        "claims": ["org.role", "plan"],
        "conditions": [
            {"space": space, "path": "pro", "condition": PRO},
            {"space": space, "path": "keys", "section": 1, "condition": SECTION},
        ],
    }


@pytest.mark.parametrize("scopes", [["site:metadata:read"], ["space:content:read"]])
def test_without_the_scope_the_token_is_refused(install, site, scopes):
    client = install(scopes)
    response = client.get(f"{API}/sites/{site.pk}/adaptive/")
    assert response.status_code == 403
    assert "site:adaptive:read" in response.json()["errors"][0]["detail"]


def test_a_site_out_of_reach_is_unknown(install, site):
    client = install(["site:adaptive:read"])
    elsewhere = SiteFactory(organization=OrganizationFactory(subdomain="globex"))
    assert client.get(f"{API}/sites/{elsewhere.pk}/adaptive/").status_code == 404


def test_the_organizations_people_read_it_and_nobody_else(site, org_reader, outsider):
    body = api_client(org_reader).get(f"{API}/sites/{site.pk}/adaptive/").json()
    assert body["claims"] == ["org.role", "plan"]
    assert api_client(outsider).get(f"{API}/sites/{site.pk}/adaptive/").status_code == 404


def test_the_consent_screen_says_what_the_scope_grants():
    assert scope_label("site:adaptive:read") == (
        "Read the visitor claims and conditions of your sites' adaptive content"
    )
