"""Who may read a site, set by its admins (``PATCH /api/v1/sites/{id}/`` and the site's page):
public, or authenticated through one of its installations granted ``site:visitor:auth``;
refused to members and readers, 400 naming the field for anything else. The site's visitor
key is never shown, and only that site's installations holding the scope receive it."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import Site
from docplatform.sites.addresses import site_url
from integrations.environment import environment_for
from integrations.models import Installation
from integrations.policies import runnable_version
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import SiteFactory

from .visitor_support import ADDER, SIGNER, install_on_site, publish_site_integration


@pytest.fixture
def signer_integration(tmp_path, org_admin):
    return publish_site_integration(
        tmp_path / "signer", org_admin, name="signer", scopes=["site:visitor:auth"], code=SIGNER
    )


@pytest.fixture
def signer(signer_integration, org_admin, site):
    return install_on_site(signer_integration, org_admin, site)


@pytest.fixture
def adder(tmp_path, org_admin, site):
    integration = publish_site_integration(
        tmp_path / "adder", org_admin, name="adder", scopes=["site:adaptive:write"], code=ADDER
    )
    return install_on_site(integration, org_admin, site)


def test_admins_make_a_site_authenticated_and_public_again(people, site, signer):
    client = api_client(people["admin"])
    answer = client.patch(
        f"{API}/sites/{site.pk}/", {"audience": "authenticated", "authInstallation": signer.pk}
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["audience"] == "authenticated"
    assert answer.json()["authInstallation"] == signer.pk
    assert "visitorSigningKey" not in answer.content.decode()
    assert site.visitor_signing_key not in answer.content.decode()
    entry = AuditEntry.objects.get(action="site.changed")
    changed_to = entry.details["audience"]["to"]
    assert changed_to == {"audience": "authenticated", "installation": signer.pk}
    public = client.patch(f"{API}/sites/{site.pk}/", {"audience": "public"})
    assert public.json()["audience"] == "public"
    assert public.json()["authInstallation"] is None
    site.refresh_from_db()
    assert (site.audience, site.visitor_auth_installation) == ("public", "")


@pytest.mark.parametrize(("role", "status"), [("member", 403), ("reader", 403), ("outsider", 404)])
def test_only_admins_set_who_reads_a_site(people, site, signer, role, status):
    answer = api_client(people[role]).patch(
        f"{API}/sites/{site.pk}/", {"audience": "authenticated", "authInstallation": signer.pk}
    )
    assert answer.status_code == status
    site.refresh_from_db()
    assert site.audience == "public"


def test_a_bad_audience_is_a_400_naming_the_field(
    people, site, organization, signer, adder, signer_integration
):
    client = api_client(people["admin"])
    other_site = SiteFactory(organization=organization, title="Other")
    elsewhere = install_on_site(signer_integration, people["admin"], other_site)
    cases = [
        ({"audience": "friends"}, ["audience"]),
        ({"audience": "authenticated"}, ["authInstallation"]),
        ({"audience": "authenticated", "authInstallation": ""}, ["authInstallation"]),
        ({"audience": "authenticated", "authInstallation": "NoSuchOne"}, ["authInstallation"]),
        # Another site's installation, and one of this site without the scope.
        ({"audience": "authenticated", "authInstallation": elsewhere.pk}, ["authInstallation"]),
        ({"audience": "authenticated", "authInstallation": adder.pk}, ["authInstallation"]),
        ({"audience": "authenticated", "authInstallation": signer.parent_id}, ["authInstallation"]),
        ({"spaces": ["NoSuchSpace"], "audience": "friends"}, ["audience", "spaces"]),  # each named
    ]
    for body, attrs in cases:
        answer = client.patch(f"{API}/sites/{site.pk}/", body)
        assert answer.status_code == 400, (body, answer.json())
        assert error_attrs(answer) == attrs, body
    lacking = client.patch(
        f"{API}/sites/{site.pk}/", {"audience": "authenticated", "authInstallation": adder.pk}
    )
    assert "site:visitor:auth" in lacking.json()["errors"][0]["detail"]
    site.refresh_from_db()
    assert site.audience == "public"
    assert not AuditEntry.objects.filter(action="site.changed").exists()


def test_admins_set_it_on_the_sites_page(client, org_admin, org_member, site, signer):
    address = f"/orgs/acme/sites/{site.pk}/"
    client.force_login(org_admin)
    form = client.get(address)
    assert form.status_code == 200
    html = form.content.decode()
    assert "Only visitors who sign in" in html and signer.pk in html
    assert site.visitor_signing_key not in html
    spaces = [placement.space_id for placement in site.placements.all()]
    fields = {"title": site.title, "spaces": spaces, "audience": "authenticated"}
    refused = client.post(address, fields)
    assert refused.status_code == 400
    assert "needs the installation that signs its visitors in" in refused.content.decode()
    saved = client.post(address, {**fields, "auth_installation": signer.pk})
    assert saved.status_code == 302
    site.refresh_from_db()
    assert (site.audience, site.visitor_auth_installation) == ("authenticated", signer.pk)
    client.force_login(org_member)
    assert client.post(address, {**fields, "audience": "public"}).status_code == 403
    site.refresh_from_db()
    assert site.authenticated


def test_each_site_has_its_own_key_that_only_its_scoped_installations_receive(
    site, organization, signer, adder, signer_integration, org_admin
):
    other_site = SiteFactory(organization=organization, title="Other")
    elsewhere = install_on_site(signer_integration, org_admin, other_site)
    assert site.visitor_signing_key != other_site.visitor_signing_key
    assert len(site.visitor_signing_key) >= 40

    def environment(installation):
        installation = Installation.objects.get(pk=installation.pk)
        version = runnable_version(installation.integration, installation)
        return environment_for(version, installation)

    assert environment(signer)["site"] == {
        "id": site.pk,
        "url": site_url(site),
        "visitorSigningKey": site.visitor_signing_key,
    }
    assert environment(elsewhere)["site"]["visitorSigningKey"] == other_site.visitor_signing_key
    assert "visitorSigningKey" not in environment(adder)["site"]
    assert "site" not in environment(signer.parent)  # the organization installation
    Installation.objects.filter(pk=signer.pk).update(granted_scopes=[])
    assert "visitorSigningKey" not in environment(signer)["site"]


def test_the_key_is_stored_encrypted(site):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT visitor_signing_key FROM docplatform_site WHERE id = %s", [site.pk])
        [stored] = cursor.fetchone()
    assert site.visitor_signing_key not in stored
    assert Site.objects.get(pk=site.pk).visitor_signing_key == site.visitor_signing_key


def test_the_consent_page_says_what_the_visitor_scopes_grant(client, org_admin, tmp_path, site):
    from django.urls import reverse

    integration = publish_site_integration(
        tmp_path / "all",
        org_admin,
        name="visitor-all",
        scopes=["site:visitor:auth", "site:visitor:claims", "site:adaptive:write"],
        code=SIGNER,
    )
    client.force_login(org_admin)
    address = reverse("marketplace:install", args=["acme", integration.name])
    page = client.get(f"{address}?level=site&site={site.pk}").content.decode()
    for words in (
        "Sign in the visitors of the sites you let it guard, and hold those sites&#x27; visitor "
        "signing keys <code>site:visitor:auth</code>",
        "See who your sites&#x27; signed-in visitors are (their claims) in their page views and "
        "feedback <code>site:visitor:claims</code>",
        "Add to the claims of your sites&#x27; signed-in visitors, which decide the adaptive "
        "content they see <code>site:adaptive:write</code>",
    ):
        assert words in page
