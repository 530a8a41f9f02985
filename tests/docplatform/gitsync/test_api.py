"""Git sync through the REST API (``/api/v1/spaces/{id}/git/...``): connecting, the syncs and
who may do what."""

import pytest
from django.db import connection as database

from docplatform.events.models import Event
from docplatform.gitsync.models import GitConnection, GitSync
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, publish_integration
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory

pytestmark = pytest.mark.django_db
SECRET = "ghp_s3cr3t-t0ken-value"


@pytest.fixture
def admin_api(org_admin):
    return api_client(org_admin)


def git_url(space) -> str:
    return f"{API}/spaces/{space.pk}/git/"


def test_an_admin_connects_a_space(admin_api, space, remote):
    response = admin_api.put(git_url(space), {"url": remote, "syncOnRevision": True})
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ("url", "branch", "syncOnRevision", "credentialsSet")} == {
        "url": remote,
        "branch": "main",
        "syncOnRevision": True,
        "credentialsSet": False,
    }
    assert admin_api.get(git_url(space)).json() == body


@pytest.mark.parametrize(
    "url",
    [
        "/elsewhere/docs.git",  # outside GIT_SYNC_ALLOWED
        "https://git.example.com/team/docs.git",  # not allowed here either
        "file:///srv/docs.git",
        "docs.git",
        "ext::sh -c touch% /tmp/pwned",
        "-oProxyCommand=touch /tmp/pwned",
        "http://git.example.com/docs.git",
        "{root}/../outside.git",
        "{root}/docs.git; rm -rf /",
    ],
)
def test_an_address_that_is_not_allowed_is_refused_when_saved(admin_api, space, git_root, url):
    response = admin_api.put(git_url(space), {"url": url.format(root=git_root)})
    assert response.status_code == 400
    assert error_attrs(response) == ["url"]
    assert not GitConnection.objects.exists()


def test_https_addresses_must_match_a_pattern_and_keep_credentials_out(admin_api, space, settings):
    settings.GIT_SYNC_ALLOWED = ["https://git.example.com/*"]
    refused = admin_api.put(git_url(space), {"url": "https://me:pw@git.example.com/docs.git"})
    assert error_attrs(refused) == ["url"]
    accepted = admin_api.put(git_url(space), {"url": "https://git.example.com/docs.git"})
    assert accepted.status_code == 200


@pytest.mark.parametrize("branch", ["-f", "a..b", "main.lock", "has space", "/main", "x/.y"])
def test_a_branch_that_is_not_a_safe_name_is_refused(admin_api, space, remote, branch):
    response = admin_api.put(git_url(space), {"url": remote, "branch": branch})
    assert response.status_code == 400
    assert error_attrs(response) == ["branch"]
    assert not GitConnection.objects.exists()


def test_credentials_are_encrypted_at_rest_and_never_shown(admin_api, space, settings):
    settings.GIT_SYNC_ALLOWED = ["https://git.example.com/*"]
    body = {
        "url": "https://git.example.com/docs.git",
        "credentials": {"username": "docs-bot", "password": SECRET},
    }
    response = admin_api.put(git_url(space), body)
    assert response.status_code == 200
    assert response.json()["credentialsSet"] is True
    assert SECRET not in response.content.decode()
    assert SECRET not in admin_api.get(git_url(space)).content.decode()
    with database.cursor() as cursor:
        cursor.execute("SELECT credentials FROM docplatform_gitconnection")
        [(raw,)] = cursor.fetchall()
    assert SECRET not in raw and "docs-bot" not in raw
    assert GitConnection.objects.get().credentials == {"username": "docs-bot", "password": SECRET}

    kept = admin_api.put(git_url(space), {"url": "https://git.example.com/docs.git"})
    assert kept.json()["credentialsSet"] is True  # absent: kept
    moved = admin_api.put(git_url(space), {"url": "https://git.example.com/other.git"})
    assert moved.json()["credentialsSet"] is False  # another address: dropped
    admin_api.put(git_url(space), body)
    forgotten = admin_api.put(git_url(space), {**body, "credentials": None})
    assert forgotten.json()["credentialsSet"] is False


def test_credentials_are_for_https_addresses_only(admin_api, space, remote):
    response = admin_api.put(
        git_url(space), {"url": remote, "credentials": {"username": "u", "password": "p"}}
    )
    assert error_attrs(response) == ["credentials"]
    incomplete = admin_api.put(git_url(space), {"url": remote, "credentials": {"username": "u"}})
    assert error_attrs(incomplete) == ["credentials.password"]


def test_sync_and_import_answer_202_with_the_sync_and_list_the_history(
    admin_api, space, connected, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        exported = admin_api.post(f"{git_url(space)}sync/")
        again = admin_api.post(f"{git_url(space)}sync/")
        imported = admin_api.post(f"{git_url(space)}import/")
    assert [exported.status_code, again.status_code, imported.status_code] == [202, 202, 202]
    assert exported.json()["status"] == "queued" and exported.json()["direction"] == "export"
    assert again.json()["id"] == exported.json()["id"]  # still waiting: the same sync
    assert imported.json()["direction"] == "import"
    assert len(queued) == 2

    listed = admin_api.get(f"{git_url(space)}syncs/").json()
    assert listed["count"] == 2
    assert [row["id"] for row in listed["results"]] == [
        imported.json()["id"],
        exported.json()["id"],
    ]
    detail = admin_api.get(f"{git_url(space)}syncs/{exported.json()['id']}/").json()
    assert detail == exported.json()


def test_a_space_without_a_connection_cannot_sync(admin_api, space):
    assert admin_api.get(git_url(space)).status_code == 404
    response = admin_api.post(f"{git_url(space)}sync/")
    assert response.status_code == 409
    assert response.json()["errors"][0]["code"] == "not_connected"
    assert admin_api.delete(git_url(space)).status_code == 404
    assert not GitSync.objects.exists()


@pytest.mark.slow
def test_disconnecting_keeps_the_history(admin_api, space, connected, run_sync):
    sync = run_sync(space)
    assert admin_api.delete(git_url(space)).status_code == 204
    assert not GitConnection.objects.exists()
    assert admin_api.get(f"{git_url(space)}syncs/{sync.pk}/").json()["status"] == "success"


def test_members_read_and_only_admins_change(space, connected, org_member, remote):
    member = api_client(org_member)
    assert member.get(git_url(space)).status_code == 200
    assert member.get(f"{git_url(space)}syncs/").status_code == 200
    for method, path, body in [
        ("put", "", {"url": remote}),
        ("delete", "", None),
        ("post", "sync/", None),
        ("post", "import/", None),
    ]:
        response = getattr(member, method)(git_url(space) + path, body)
        assert response.status_code == 403, path
        assert "admins" in response.json()["errors"][0]["detail"]
    assert not GitSync.objects.exists()
    assert GitConnection.objects.get().url == remote


@pytest.mark.slow
def test_other_organizations_get_404s_naming_nothing(space, connected, run_sync, remote):
    sync = run_sync(space)
    outsider = api_client(MembershipFactory(organization=OrganizationFactory(), role="admin").user)
    for method, path in [
        ("get", ""),
        ("put", ""),
        ("delete", ""),
        ("post", "sync/"),
        ("get", "syncs/"),
        ("get", f"syncs/{sync.pk}/"),
    ]:
        response = getattr(outsider, method)(git_url(space) + path, {"url": remote})
        assert (response.status_code, response.json()) == (404, NOT_FOUND), path
    assert GitSync.objects.count() == 1


def test_the_declared_gitsync_start_and_complete_are_gone(admin_api, space):
    """Only real syncs fire the Git sync events now (``manage.py fire_event`` remains for
    operators): a completion without a start is not something a caller can say."""
    for path in ("gitsync/start/", "gitsync/complete/"):
        response = admin_api.post(f"{API}/spaces/{space.pk}/{path}", {"status": "success"})
        assert response.status_code == 404
    assert not Event.objects.filter(type__startswith="space_gitsync_").exists()


@pytest.mark.slow
def test_a_sync_of_another_space_is_not_found(admin_api, space, connected, run_sync, organization):
    sibling = SpaceFactory(organization=organization)
    sync = run_sync(space)
    response = admin_api.get(f"{API}/spaces/{sibling.pk}/git/syncs/{sync.pk}/")
    assert response.status_code == 404


@pytest.mark.slow
def test_an_installation_with_the_git_scope_reads_the_syncs_and_changes_nothing(
    tmp_path, org_admin, organization, space, connected, run_sync, remote
):
    integration = publish_integration(
        tmp_path / "follower", org_admin, name="follower", scopes=["space:git:sync"]
    )
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    token = api_client(token=installation.api_token)
    sync = run_sync(space)
    assert token.get(f"{git_url(space)}syncs/").json()["results"][0]["id"] == sync.pk
    assert token.get(f"{git_url(space)}syncs/{sync.pk}/").status_code == 200
    assert token.get(git_url(space)).json()["credentialsSet"] is False
    assert token.post(f"{git_url(space)}sync/").status_code == 403
    assert token.put(git_url(space), {"url": remote}).status_code == 403
    assert GitSync.objects.count() == 1
