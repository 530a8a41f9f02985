"""Spaces made, changed and deleted by their organization's people through the REST API, as
the role table says (admins and members create, admins change and delete, readers read), and
an integration's writes recorded as its own: each action one audit row, nothing written when
refused."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.events.models import Event
from docplatform.models import Page, Revision, Space
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, publish_integration
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": [{"path": "intro", "title": "Intro", "body": "Hi"}]}


def rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action))


# --- Create ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("role", ["admin", "member"])
def test_admins_and_members_create_spaces(people, organization, role):
    created = api_client(people[role]).post(
        f"{API}/orgs/acme/spaces/", {"title": "Runbooks", "visibility": "unlisted"}
    )
    assert created.status_code == 201
    body = created.json()
    assert (body["title"], body["visibility"], body["currentRevision"]) == (
        "Runbooks",
        "unlisted",
        None,
    )
    space = Space.objects.get(pk=body["id"])
    assert space.organization == organization
    [row] = rows("space.created")
    assert (row.actor_user, row.target_id, row.organization_id) == (
        people[role],
        space.pk,
        organization.pk,
    )
    assert row.details == {"title": "Runbooks", "visibility": "unlisted"}
    assert AuditEntry.objects.count() == 1


def test_a_new_space_is_private_unless_said(people):
    body = api_client(people["member"]).post(f"{API}/orgs/acme/spaces/", {"title": "Notes"}).json()
    assert body["visibility"] == "private"


@pytest.mark.parametrize(("role", "status"), [("reader", 403), ("outsider", 404)])
def test_readers_and_strangers_create_no_space(people, role, status):
    response = api_client(people[role]).post(f"{API}/orgs/acme/spaces/", {"title": "Mine"})
    assert response.status_code == status
    if status == 403:
        assert "admins and members" in response.json()["errors"][0]["detail"]
    else:
        assert response.json() == NOT_FOUND
    assert not Space.objects.filter(title="Mine").exists()
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["title"]),
        ({"title": ""}, ["title"]),
        ({"title": "   "}, ["title"]),
        ({"title": "t" * 201}, ["title"]),
        ({"title": ["Runbooks"]}, ["title"]),
        ({"title": "Runbooks", "visibility": "secret"}, ["visibility"]),
        ({"title": "Runbooks", "visibility": 3}, ["visibility"]),
        ("Runbooks", ["non_field_errors"]),
    ],
)
def test_a_bad_new_space_is_refused_naming_the_field(people, body, attrs):
    response = api_client(people["admin"]).post(f"{API}/orgs/acme/spaces/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert not Space.objects.exists()
    assert not AuditEntry.objects.exists()


def test_a_new_space_that_is_not_json_is_a_400(people):
    response = api_client(people["admin"]).post(
        f"{API}/orgs/acme/spaces/", b"{title", content_type="application/json"
    )
    assert response.status_code == 400
    assert not Space.objects.exists()


# --- Change ---------------------------------------------------------------------------------


def test_admins_rename_a_space_and_change_its_visibility_in_one_change(people, space):
    changed = api_client(people["admin"]).patch(
        f"{API}/spaces/{space.id}/", {"title": "Staff handbook", "visibility": "public"}
    )
    assert changed.status_code == 200
    assert (changed.json()["title"], changed.json()["visibility"]) == ("Staff handbook", "public")
    event = Event.objects.get(type="space_visibility_updated")
    assert event.payload["previousVisibility"] == "private"
    [row] = rows("space.changed")
    assert row.details == {
        "title": {"from": "Handbook", "to": "Staff handbook"},
        "visibility": {"from": "private", "to": "public"},
    }
    assert row.actor_user == people["admin"]
    assert AuditEntry.objects.count() == 1


def test_a_change_to_the_same_values_records_nothing(people, space):
    response = api_client(people["admin"]).patch(
        f"{API}/spaces/{space.id}/", {"title": "Handbook", "visibility": "private"}
    )
    assert response.status_code == 200
    assert not AuditEntry.objects.exists()
    assert not Event.objects.filter(type="space_visibility_updated").exists()


@pytest.mark.parametrize(("role", "status"), [("member", 403), ("reader", 403), ("outsider", 404)])
@pytest.mark.parametrize("method", ["patch", "delete"])
def test_only_admins_change_or_delete_a_space(people, space, role, status, method):
    client = api_client(people[role])
    response = getattr(client, method)(f"{API}/spaces/{space.id}/", {"title": "Mine"})
    assert response.status_code == status
    if status == 403:
        assert "admins" in response.json()["errors"][0]["detail"]
    space.refresh_from_db()
    assert (space.title, space.visibility) == ("Handbook", "private")
    assert not AuditEntry.objects.exists()
    assert client.get(f"{API}/spaces/{space.id}/").status_code == (
        404 if role == "outsider" else 200
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["non_field_errors"]),
        ({"title": ""}, ["title"]),
        ({"title": None}, ["title"]),
        ({"visibility": "everyone"}, ["visibility"]),
        ({"title": "x" * 201, "visibility": "nope"}, ["title", "visibility"]),
    ],
)
def test_a_bad_change_is_refused_naming_the_field(people, space, body, attrs):
    response = api_client(people["admin"]).patch(f"{API}/spaces/{space.id}/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    space.refresh_from_db()
    assert (space.title, space.visibility) == ("Handbook", "private")
    assert not AuditEntry.objects.exists()


# --- Delete ---------------------------------------------------------------------------------


def test_admins_delete_a_space_with_its_pages_revisions_and_installations(
    people, organization, space, tmp_path
):
    integration = publish_integration(tmp_path / "bot", people["admin"], name="bot", target="space")
    installation_create(
        user=people["admin"], integration=integration, organization=organization, space=space
    )
    other = SpaceFactory(organization=organization, title="Other")
    client = api_client(people["admin"])
    assert client.delete(f"{API}/spaces/{space.id}/").status_code == 204
    assert list(Space.objects.filter(organization=organization)) == [other]
    assert not Revision.objects.filter(space_id=space.id).exists()
    assert not Page.objects.exists()
    assert not Installation.objects.filter(space_id=space.id).exists()
    assert client.get(f"{API}/spaces/{space.id}/").json() == NOT_FOUND
    [row] = rows("space.deleted")
    assert (row.target_id, row.target_label, row.actor_user) == (
        space.id,
        "Handbook",
        people["admin"],
    )
    assert rows("space.deleted") == list(AuditEntry.objects.filter(target_type="space"))


def test_an_unknown_space_is_a_404(people):
    client = api_client(people["admin"])
    assert client.delete(f"{API}/spaces/NoSuchSpace/").json() == NOT_FOUND
    assert client.patch(f"{API}/spaces/NoSuchSpace/", {"title": "X"}).status_code == 404


# --- An integration's writes ----------------------------------------------------------------


@pytest.fixture
def bot(people, organization, tmp_path):
    """An organization installation of "Docs bot", with its token's client."""
    integration = publish_integration(
        tmp_path / "bot",
        people["admin"],
        name="docs-bot",
        title="Docs bot",
        scopes=["space:content:read", "space:content:write", "space:metadata:write"],
    )
    installation = installation_create(
        user=people["admin"], integration=integration, organization=organization
    )
    return installation, api_client(token=installation.api_token)


def test_a_revision_written_with_an_installations_token_names_it(people, space, bot, client):
    installation, token_client = bot
    written = token_client.post(
        f"{API}/spaces/{space.id}/revisions/",
        {"message": "Synced from the tracker", "pages": [{"path": "news", "title": "News"}]},
    )
    assert written.status_code == 201
    body = written.json()
    assert body["author"] is None
    assert body["authorInstallation"] == {
        "id": installation.id,
        "name": f"Docs bot (installation {installation.id})",
    }
    listed = api_client(people["reader"]).get(f"{API}/spaces/{space.id}/revisions/").json()
    assert listed["results"][0]["authorInstallation"]["id"] == installation.id
    assert listed["results"][1]["authorInstallation"] is None  # the fixture's, by nobody

    [row] = rows("revision.written")
    assert (row.actor_kind, row.actor_id, row.target_id) == (
        "installation",
        installation.id,
        body["id"],
    )
    assert row.organization_id == space.organization_id
    assert row.details == {"space": space.id, "message": "Synced from the tracker", "pages": 1}

    client.force_login(people["member"])
    history = client.get(f"/s/{space.id}/history").content.decode()
    assert f'Docs bot (installation {installation.id})</span> <span class="tag">Integration' in (
        history
    )


def test_a_persons_revision_is_theirs_and_not_audited(people, space):
    body = (
        api_client(people["member"])
        .post(f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "a", "title": "A"}]})
        .json()
    )
    assert (body["author"], body["authorInstallation"]) == (people["member"].username, None)
    assert not AuditEntry.objects.exists()


def test_an_installation_changing_visibility_is_the_actor_of_the_change(space, bot):
    installation, token_client = bot
    response = token_client.patch(f"{API}/spaces/{space.id}/", {"visibility": "public"})
    assert response.status_code == 200
    [row] = rows("space.changed")
    assert (row.actor_kind, row.actor_id, row.actor_user) == ("installation", installation.id, None)
    assert row.details == {"visibility": {"from": "private", "to": "public"}}


def test_an_installation_creates_and_deletes_no_space(space, bot):
    _, token_client = bot
    assert token_client.delete(f"{API}/spaces/{space.id}/").status_code == 403
    assert token_client.post(f"{API}/orgs/acme/spaces/", {"title": "Bot's"}).status_code == 403
    assert Space.objects.filter(pk=space.pk).exists()
    assert not Space.objects.filter(title="Bot's").exists()
    assert not AuditEntry.objects.filter(action__startswith="space.").exists()
