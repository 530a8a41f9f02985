"""Consent for new scopes (DESIGN.md, "new version asks for more scopes"): an installation acts
with the scopes its organization granted; a version asking for more waits for an admin's
approval, one asking for fewer narrows it at once. Real publishes, installs, tokens, events."""

import pytest

from docplatform.access import Action, refusal
from docplatform.events.models import Delivery, Event
from docplatform.revisions import space_content_update
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import (
    MembershipFactory,
    OrganizationFactory,
    SpaceFactory,
)

pytestmark = pytest.mark.django_db

METADATA = ["space:metadata:read"]
METADATA_AND_CONTENT = ["space:metadata:read", "space:content:read"]


@pytest.fixture
def space_spec():
    return {"title": "Guide", "paths": ["intro"]}


@pytest.fixture
def bot(publish, org_admin):
    """Publish a version of the ``bot`` integration asking for ``scopes``."""

    def publish_version(scopes, **fields):
        return publish(org_admin, name="bot", scopes=scopes, **fields)

    return publish_version


def install(integration, user, organization, **where) -> Installation:
    return installation_create(
        user=user, integration=integration, organization=organization, **where
    )


def shown(installation, user) -> dict:
    return api_client(user).get(f"{API}/installations/{installation.id}/").json()


def content_deliveries(installation) -> int:
    return Delivery.objects.filter(
        installation=installation, event__type="space_content_updated"
    ).count()


def edit(space) -> None:
    space_content_update(space=space, pages=[{"path": "intro", "title": "Intro", "body": "x"}])


def test_installing_records_the_scopes_the_organization_granted(
    bot, org_admin, org_member, organization, space
):
    integration = bot(METADATA_AND_CONTENT)
    installation = install(integration, org_admin, organization, space=space)
    assert installation.granted_scopes == METADATA_AND_CONTENT
    assert installation.parent.granted_scopes == METADATA_AND_CONTENT
    body = shown(installation, org_member)
    assert body["scopes"] == METADATA_AND_CONTENT
    assert body["scopesAwaitingApproval"] == []
    assert body["permissionsNotice"] is None


def test_more_scopes_do_not_widen_the_installation_token_until_an_admin_approves(
    bot, org_admin, org_member, organization, space
):
    installation = install(bot(METADATA), org_admin, organization)
    token = api_client(token=installation.api_token)
    pages = f"{API}/spaces/{space.id}/pages/"
    assert token.get(f"{API}/spaces/{space.id}/").status_code == 200
    assert token.get(pages).status_code == 403

    bot(METADATA_AND_CONTENT)  # version 2 asks for the content too
    refused = token.get(pages)
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["detail"] == (
        "The installation does not have the scope space:content:read. "
        "It awaits an admin's approval."
    )
    body = shown(installation, org_member)
    assert body["scopes"] == METADATA
    assert body["scopesAwaitingApproval"] == ["space:content:read"]
    assert body["permissionsNotice"] == "asks for new permissions: space:content:read"

    # A member may not approve; nothing changes.
    approve = f"{API}/installations/{installation.id}/approve-scopes/"
    by_member = api_client(org_member).post(approve)
    assert by_member.status_code == 403
    assert by_member.json()["errors"][0]["detail"] == refusal(Action.APPROVE_SCOPES)
    assert token.get(pages).status_code == 403

    setups_before = Event.objects.filter(type="installation_setup").count()
    approved = api_client(org_admin).post(approve)
    assert approved.status_code == 200, approved.json()
    assert approved.json()["scopes"] == METADATA_AND_CONTENT
    assert approved.json()["scopesAwaitingApproval"] == []
    assert approved.json()["permissionsNotice"] is None

    allowed = token.get(pages)
    assert allowed.status_code == 200
    assert [page["path"] for page in allowed.json()["results"]] == ["intro"]
    setup = Event.objects.filter(type="installation_setup").order_by("-created_at").first()
    assert Event.objects.filter(type="installation_setup").count() == setups_before + 1
    assert setup.payload == {
        "status": "active",
        "changed": [],
        "approvedScopes": ["space:content:read"],
    }
    assert setup.deliveries.get().installation_id == installation.id


def test_events_needing_a_scope_not_yet_granted_are_not_delivered_until_approval(
    bot, org_admin, org_member, organization, space
):
    installation = install(bot(METADATA), org_admin, organization)
    bot(METADATA_AND_CONTENT)
    edit(space)
    assert content_deliveries(installation) == 0
    assert Event.objects.filter(type="space_content_updated").count() == 1

    response = api_client(org_admin).post(f"{API}/installations/{installation.id}/approve-scopes/")
    assert response.status_code == 200
    edit(space)
    assert content_deliveries(installation) == 1


def test_fewer_scopes_apply_at_once_and_asking_again_needs_a_new_approval(
    bot, org_admin, org_member, organization, space
):
    installation = install(bot(METADATA_AND_CONTENT), org_admin, organization)
    token = api_client(token=installation.api_token)
    assert token.get(f"{API}/spaces/{space.id}/pages/").status_code == 200

    bot(METADATA)  # version 2 asks for less: it applies at once, no approval
    assert token.get(f"{API}/spaces/{space.id}/pages/").status_code == 403
    installation.refresh_from_db()
    assert installation.granted_scopes == METADATA
    edit(space)
    assert content_deliveries(installation) == 0
    assert shown(installation, org_member)["permissionsNotice"] is None

    bot(METADATA_AND_CONTENT, description="Reads content again.")  # asks for it again
    assert token.get(f"{API}/spaces/{space.id}/pages/").status_code == 403
    assert shown(installation, org_member)["scopesAwaitingApproval"] == ["space:content:read"]


def test_an_approval_covers_the_space_installations_and_a_new_one_waits_too(
    bot, org_admin, org_member, organization, space
):
    first = install(bot(METADATA), org_admin, organization, space=space)
    organization_level = first.parent
    bot(METADATA_AND_CONTENT)

    # Installing into another space now grants what the organization holds, no more.
    other = SpaceFactory(organization=organization)
    integration = Installation.objects.get(pk=first.pk).integration
    second = install(integration, org_admin, organization, space=other)
    assert second.granted_scopes == METADATA
    assert shown(second, org_member)["scopesAwaitingApproval"] == ["space:content:read"]

    response = api_client(org_admin).post(f"{API}/installations/{second.id}/approve-scopes/")
    assert response.status_code == 200
    for installation in (first, second, organization_level):
        installation.refresh_from_db()
        assert installation.granted_scopes == METADATA_AND_CONTENT
    approvals = [
        event
        for event in Event.objects.filter(type="installation_setup")
        if "approvedScopes" in event.payload
    ]
    assert sorted(event.deliveries.get().installation_id for event in approvals) == sorted(
        [first.id, second.id, organization_level.id]
    )


def test_approving_part_of_the_new_scopes_and_refusals_name_the_field(
    bot, org_admin, org_member, organization
):
    installation = install(bot(METADATA), org_admin, organization)
    approve = f"{API}/installations/{installation.id}/approve-scopes/"
    admin = api_client(org_admin)

    nothing = admin.post(approve)
    assert nothing.status_code == 400
    assert error_attrs(nothing) == ["scopes"]
    assert "nothing to approve" in nothing.json()["errors"][0]["detail"]

    bot([*METADATA_AND_CONTENT, "space:content:write"])
    unknown = admin.post(approve, {"scopes": ["site:views:read"]})
    assert unknown.status_code == 400
    assert error_attrs(unknown) == ["scopes"]
    assert unknown.json()["errors"][0]["detail"] == (
        "not a new permission this installation asks for: site:views:read "
        "(it asks for: space:content:read, space:content:write)"
    )
    assert admin.post(approve, {"scopes": []}).status_code == 400
    assert error_attrs(admin.post(approve, {"scopes": "space:content:read"})) == ["scopes"]

    partial = admin.post(approve, {"scopes": ["space:content:read"]})
    assert partial.status_code == 200
    assert partial.json()["scopes"] == METADATA_AND_CONTENT
    assert partial.json()["scopesAwaitingApproval"] == ["space:content:write"]
    assert partial.json()["permissionsNotice"] == "asks for new permissions: space:content:write"


def test_another_organization_cannot_see_or_approve(bot, org_admin, organization):
    installation = install(bot(METADATA), org_admin, organization)
    bot(METADATA_AND_CONTENT)
    stranger = MembershipFactory(organization=OrganizationFactory(), role="admin").user
    response = api_client(stranger).post(f"{API}/installations/{installation.id}/approve-scopes/")
    assert response.status_code == 404
    installation.refresh_from_db()
    assert installation.granted_scopes == METADATA


def test_an_integration_made_private_or_unlisted_keeps_existing_installations_working(
    publish, tmp_path, space
):
    """globex's public integration installed by acme; globex makes it private, then unlisted."""
    globex = OrganizationFactory(subdomain="globex")
    publisher = MembershipFactory(organization=globex, role="admin").user
    acme_admin = MembershipFactory(organization=space.organization, role="admin").user
    integration = publish(
        publisher,
        name="reader",
        organization="globex",
        scopes=METADATA_AND_CONTENT,
        approved=True,
    )
    installation = install(integration, acme_admin, space.organization)
    token = api_client(token=installation.api_token)
    member = api_client(acme_admin)
    page = member.get(f"/marketplace/orgs/acme/installations/{installation.id}/")
    assert "/marketplace/orgs/acme/integrations/reader/" in page.content.decode()

    for visibility in ("private", "unlisted"):
        publish(
            publisher,
            name="reader",
            organization="globex",
            scopes=METADATA_AND_CONTENT,
            visibility=visibility,
        )
        # The installation works as before: API access, events, its pages.
        assert token.get(f"{API}/spaces/{space.id}/pages/").status_code == 200
        before = content_deliveries(installation)
        edit(space)
        assert content_deliveries(installation) == before + 1
        assert member.get(f"{API}/installations/{installation.id}/").status_code == 200
        page = member.get(f"/marketplace/orgs/acme/installations/{installation.id}/")
        assert page.status_code == 200
        assert "/marketplace/orgs/acme/integrations/reader/" not in page.content.decode()
        # The catalogue no longer shows it to acme, and acme cannot install it anew.
        names = [row["name"] for row in member.get(f"{API}/integrations/").json()["results"]]
        assert "reader" not in names
        assert member.get(f"{API}/integrations/reader/").status_code == 404
        assert "reader" not in member.get("/marketplace/orgs/acme/").content.decode()
        new_space = SpaceFactory(organization=space.organization)
        refused = member.post(
            f"{API}/spaces/{new_space.id}/installations/", {"integration": "reader"}
        )
        assert refused.status_code == 404


# --- The marketplace and the admin ------------------------------------------------------------


def test_the_marketplace_shows_new_permissions_and_an_admin_approves_them(
    client, bot, org_admin, org_member, organization
):
    installation = install(bot(METADATA), org_admin, organization)
    bot(METADATA_AND_CONTENT)
    page_url = f"/marketplace/orgs/acme/installations/{installation.id}/"
    approve_url = page_url + "approve-scopes/"

    client.force_login(org_member)
    page = client.get(page_url).content.decode()
    assert "asks for new permissions" in page
    assert "Read the content of your spaces" in page
    assert "Approve new permissions" not in page
    assert "An admin of" in page
    listing = client.get("/marketplace/orgs/acme/installations/").content.decode()
    assert "asks for new permissions: space:content:read" in listing
    assert client.post(approve_url, {"scope": "space:content:read"}).status_code == 403

    client.force_login(org_admin)
    page = client.get(page_url).content.decode()
    assert "Approve new permissions" in page
    assert 'name="scope" value="space:content:read"' in page
    response = client.post(approve_url, {"scope": "space:content:read"}, follow=True)
    assert response.status_code == 200
    assert "Approved: the new permissions apply now." in response.content.decode()
    assert "asks for new permissions" not in response.content.decode()
    installation.refresh_from_db()
    assert installation.granted_scopes == METADATA_AND_CONTENT

    again = client.post(approve_url, {"scope": "space:content:read"}, follow=True)
    assert "Not approved: nothing to approve" in again.content.decode()


def test_the_marketplace_approves_only_what_the_page_showed(
    client, bot, org_admin, org_member, organization
):
    """A version published between showing the page and pressing Approve asks again."""
    installation = install(bot(METADATA), org_admin, organization)
    bot(METADATA_AND_CONTENT)
    client.force_login(org_admin)
    bot([*METADATA_AND_CONTENT, "space:content:write"])  # published meanwhile
    client.post(
        f"/marketplace/orgs/acme/installations/{installation.id}/approve-scopes/",
        {"scope": "space:content:read"},
    )
    installation.refresh_from_db()
    assert installation.granted_scopes == METADATA_AND_CONTENT
    assert shown(installation, org_member)["scopesAwaitingApproval"] == ["space:content:write"]


def test_the_admin_shows_new_permissions(client, bot, org_admin, organization, django_user_model):
    installation = install(bot(METADATA), org_admin, organization)
    bot(METADATA_AND_CONTENT)
    operator = django_user_model.objects.create_superuser("operator", "op@example.com", "pw")
    client.force_login(operator)
    listing = client.get("/admin/integrations/installation/").content.decode()
    assert "asks for new permissions: space:content:read" in listing
    detail = client.get(f"/admin/integrations/installation/{installation.id}/change/")
    assert "asks for new permissions: space:content:read" in detail.content.decode()
    assert "space:metadata:read" in detail.content.decode()


# --- The migration ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_grants_existing_installations_their_integrations_scopes(migrate_to):
    before = [("integrations", "0007_oauthstate_issued_to")]
    old = migrate_to(before)
    organization = old.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    integration = old.get_model("integrations", "Integration").objects.create(
        id="i1",
        name="old-reader",
        organization=organization,
        title="Old reader",
        description="d",
        scopes=METADATA_AND_CONTENT,
    )
    old.get_model("integrations", "Installation").objects.create(
        id="n1",
        integration=integration,
        organization=organization,
        level="organization",
        api_token_hash="h" * 64,
        api_token="t",
    )
    migrate_to([("integrations", "0008_installation_granted_scopes")])
    granted = Installation.objects.filter(pk="n1").values_list("granted_scopes", flat=True)
    assert granted.get() == METADATA_AND_CONTENT  # read as 0008 left it
