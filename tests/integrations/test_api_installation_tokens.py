"""What integration code may do with its installation token (DESIGN.md, "API tokens")."""

import pytest
from django.db import connection

from docplatform.events.models import Event
from docplatform.models import Space, hash_token
from docplatform.services import api_token_create
from integrations.models import Installation
from integrations.operators import OPERATOR
from integrations.services.installations import (
    installation_create,
    installation_pause,
    installation_resume,
    installation_uninstall,
)
from integrations.services.oauth import oauth_connect_start
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, row_counts
from tests.factories import PageFactory, RevisionFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db

READ_SCOPES = ["space:content:read", "space:metadata:read", "site:metadata:read"]
WRITE_SCOPES = ["space:content:write", "space:metadata:write"]
CONFIGURATIONS = {
    "account": {
        "properties": {
            "api_key": {"type": "string", "title": "Key", "description": "d"},
            "oauth": {
                "type": "button",
                "title": "Connect",
                "description": "d",
                "button_text": "Connect",
                "callback_url": "/oauth",
            },
        },
        "required": ["api_key"],
    }
}


@pytest.fixture
def spaces(organization):
    first = SpaceFactory(organization=organization, title="First")
    second = SpaceFactory(organization=organization, title="Second")
    for space in (first, second):
        revision = RevisionFactory(space=space)
        PageFactory(revision=revision, path="intro")
        space.current_revision = revision
        space.save()
    return first, second


@pytest.fixture
def site(organization, spaces):
    site = SiteFactory(organization=organization)
    site.spaces.add(spaces[0])
    return site


@pytest.fixture
def install(publish, org_admin, organization):
    """Install an integration with ``scopes``; returns the installation and its token client."""

    def install_(scopes, **where):
        integration = publish(org_admin, name="bot", scopes=scopes, configurations=CONFIGURATIONS)
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization, **where
        )
        return installation, api_client(token=installation.api_token)

    return install_


def test_the_token_is_an_installation_token_kept_only_as_hash_and_ciphertext(install):
    installation, _ = install(READ_SCOPES)
    raw = installation.api_token
    assert raw.startswith("dpi_")
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_token, api_token_hash FROM integrations_installation")
        stored = cursor.fetchall()
    assert raw not in repr(stored)
    assert stored[0][1] == hash_token(raw)


def test_read_scopes_reach_every_space_of_an_all_spaces_installation(install, spaces, site):
    _, client = install(READ_SCOPES)
    for space in spaces:
        assert client.get(f"{API}/spaces/{space.id}/").json()["id"] == space.id
        revisions = client.get(f"{API}/spaces/{space.id}/revisions/").json()["results"]
        assert [row["id"] for row in revisions] == [space.current_revision_id]
        assert client.get(f"{API}/spaces/{space.id}/pages/").json()["count"] == 1
        pages = client.get(f"{API}/revisions/{space.current_revision_id}/pages/")
        assert pages.json()["count"] == 1
    assert client.get(f"{API}/sites/{site.id}/").json()["spaces"] == [spaces[0].id]


@pytest.mark.parametrize(
    ("scopes", "path", "expected"),
    [
        (["space:metadata:read"], "/spaces/{space}/", 200),
        (["space:metadata:read"], "/spaces/{space}/revisions/", 403),
        (["space:metadata:read"], "/spaces/{space}/pages/", 403),
        (["space:metadata:read"], "/revisions/{revision}/pages/", 403),
        (["space:content:read"], "/spaces/{space}/", 403),
        (["space:content:read"], "/spaces/{space}/pages/", 200),
        (["space:content:read"], "/sites/{site}/", 403),
        (["site:metadata:read"], "/sites/{site}/", 200),
        (["site:metadata:read"], "/spaces/{space}/", 403),
    ],
)
def test_each_read_needs_its_scope(install, spaces, site, scopes, path, expected):
    _, client = install(scopes)
    space = spaces[0]
    url = API + path.format(space=space.id, site=site.id, revision=space.current_revision_id)
    response = client.get(url)
    assert response.status_code == expected
    if expected == 403:
        assert "scope" in response.json()["errors"][0]["detail"]


def test_write_scopes_allow_new_revisions_and_visibility_changes(install, spaces):
    _, client = install(WRITE_SCOPES)
    space = spaces[0]
    created = client.post(
        f"{API}/spaces/{space.id}/revisions/",
        {"message": "From the bot", "pages": [{"path": "news", "title": "News"}]},
    )
    assert created.status_code == 201
    assert created.json()["author"] is None
    assert Event.objects.filter(type="space_content_updated").exists()
    changed = client.patch(f"{API}/spaces/{space.id}/", {"visibility": "public"})
    assert changed.status_code == 200
    assert Space.objects.get(pk=space.pk).visibility == "public"


def test_writes_without_their_scope_are_refused(install, spaces):
    _, client = install(READ_SCOPES)
    space = spaces[0]
    before = row_counts()
    posted = client.post(
        f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "x", "title": "X"}]}
    )
    patched = client.patch(f"{API}/spaces/{space.id}/", {"visibility": "public"})
    assert posted.status_code == patched.status_code == 403
    assert row_counts() == before
    assert Space.objects.get(pk=space.pk).visibility == "private"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/me/"),
        ("get", "/orgs/"),
        ("get", "/orgs/acme/"),
        ("get", "/orgs/acme/spaces/"),
        ("get", "/orgs/acme/events/"),
        ("get", "/orgs/acme/installations/"),
        ("get", "/integrations/"),
        ("get", "/integrations/bot/"),
        ("get", "/installations/{installation}/"),
        ("post", "/installations/{installation}/pause/"),
        ("delete", "/installations/{installation}/"),
        ("get", "/installations/{installation}/deliveries/"),
        ("post", "/spaces/{space}/git/sync/"),
        ("post", "/spaces/{space}/views/"),
        ("post", "/spaces/{space}/installations/"),
    ],
)
def test_people_endpoints_refuse_installation_tokens(install, spaces, method, path):
    installation, client = install(READ_SCOPES + WRITE_SCOPES)
    before = row_counts()
    url = API + path.format(installation=installation.id, space=spaces[0].id)
    response = getattr(client, method)(url, {"integration": "bot"} if method == "post" else None)
    assert response.status_code == 403
    assert row_counts() == before


def test_a_space_installation_reaches_its_space_only(install, spaces, site):
    _, client = install(READ_SCOPES, space=spaces[0])
    assert client.get(f"{API}/spaces/{spaces[0].id}/").status_code == 200
    assert client.get(f"{API}/spaces/{spaces[1].id}/").json() == NOT_FOUND
    assert client.get(f"{API}/sites/{site.id}/").json() == NOT_FOUND


def test_an_installation_on_selected_spaces_reaches_those_only(
    publish, org_admin, organization, spaces
):
    integration = publish(org_admin, name="bot", scopes=READ_SCOPES)
    installation = installation_create(
        user=org_admin,
        integration=integration,
        organization=organization,
        space_selection="selected",
        selected_spaces=[spaces[1]],
    )
    client = api_client(token=installation.api_token)
    assert client.get(f"{API}/spaces/{spaces[0].id}/").status_code == 404
    assert client.get(f"{API}/spaces/{spaces[1].id}/").status_code == 200
    revision = spaces[0].current_revision_id
    assert client.get(f"{API}/revisions/{revision}/pages/").status_code == 404


def test_a_site_installation_reaches_its_site_and_the_spaces_it_publishes(install, spaces, site):
    _, client = install(READ_SCOPES, site=site)
    assert client.get(f"{API}/sites/{site.id}/").status_code == 200
    assert client.get(f"{API}/spaces/{spaces[0].id}/").status_code == 200
    assert client.get(f"{API}/spaces/{spaces[1].id}/").status_code == 404


def test_another_organizations_spaces_are_out_of_reach(install):
    _, client = install(READ_SCOPES)
    elsewhere = SpaceFactory()
    assert client.get(f"{API}/spaces/{elsewhere.id}/").json() == NOT_FOUND


def test_the_own_installation_is_read_and_configured_through_the_setup_flow(install):
    installation, client = install([])
    own = client.get(f"{API}/installation/")
    assert own.status_code == 200
    assert own.json()["id"] == installation.id
    assert own.json()["status"] == "pending"

    token_value = "access-token-from-the-provider"
    response = client.patch(
        f"{API}/installation/",
        {"configuration": {"api_key": "k-1"}, "externalIds": ["workspace-1"]},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "active"
    assert body["configuration"] == {"api_key": "k-1"}
    assert body["externalIds"] == ["workspace-1"]

    # A button property: only through the OAuth flow, with a state a member was issued.
    refused = client.patch(
        f"{API}/installation/", {"configuration": {"oauth": {"access_token": token_value}}}
    )
    assert error_attrs(refused) == ["configuration.oauth"]
    state = oauth_connect_start(
        user=installation.created_by, installation=installation, property_name="oauth"
    ).state
    response = client.post(
        f"{API}/installation/oauth/complete",
        {"state": state, "configuration": {"oauth": {"access_token": token_value}}},
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["configuration"]["api_key"] == "k-1"
    assert body["configuration"]["oauth"]["connected"] is True
    assert body["externalIds"] == ["workspace-1"]
    assert token_value not in response.content.decode()
    assert Installation.objects.get().credentials == {"oauth": {"access_token": token_value}}


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["non_field_errors"]),
        ({"externalIds": "one"}, ["externalIds"]),
        ({"externalIds": [{"id": 1}]}, ["externalIds.0"]),
        ({"externalIds": ["ok", 7]}, ["externalIds.1"]),  # a number is not text
        ({"externalIds": [True]}, ["externalIds.0"]),
        ({"configuration": {"api_key": 5}}, ["configuration.api_key"]),
        ({"configuration": {"oauth": {}}}, ["configuration.oauth"]),
        # one bad part refuses the whole edit
        ({"configuration": {"api_key": "k"}, "externalIds": [["x"]]}, ["externalIds.0"]),
    ],
)
def test_bad_own_installation_bodies_change_nothing(install, body, attrs):
    installation, client = install([])
    stored = Installation.objects.values().get(pk=installation.pk)
    before = row_counts()
    response = client.patch(f"{API}/installation/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert Installation.objects.values().get(pk=installation.pk) == stored
    assert row_counts() == before


def test_people_cannot_call_the_own_installation_endpoint(org_admin):
    assert api_client(org_admin).get(f"{API}/installation/").status_code == 403
    assert api_client().get(f"{API}/installation/").status_code == 401


def test_a_paused_installations_token_is_refused_until_resumed(install, spaces):
    installation, client = install(READ_SCOPES)
    installation_pause(user=OPERATOR, installation=installation)
    response = client.get(f"{API}/spaces/{spaces[0].id}/")
    assert response.status_code == 401
    assert response.json()["errors"][0]["code"] == "authentication_failed"
    installation_resume(user=OPERATOR, installation=installation)
    assert client.get(f"{API}/spaces/{spaces[0].id}/").status_code == 200


def test_a_space_installations_token_is_refused_while_its_organization_one_is_paused(
    install, spaces
):
    installation, client = install(READ_SCOPES, space=spaces[0])
    installation_pause(user=OPERATOR, installation=installation.parent)
    assert client.get(f"{API}/installation/").status_code == 401


def test_a_deleted_installations_token_is_refused(install):
    installation, client = install(READ_SCOPES)
    installation_uninstall(user=OPERATOR, installation=installation)
    assert client.get(f"{API}/installation/").status_code == 401


def test_personal_tokens_still_work_beside_installation_tokens(install, org_member, spaces):
    install(READ_SCOPES)
    _, raw = api_token_create(user=org_member, name="ci")
    client = api_client(token=raw)
    assert client.get(f"{API}/me/").status_code == 200
    assert client.post(f"{API}/spaces/{spaces[0].id}/views/").status_code == 204
