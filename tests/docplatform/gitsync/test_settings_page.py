"""The Git part of a space's settings page, as an admin uses it (the Django test client)."""

import pytest

from docplatform.gitsync.models import GitConnection, GitSync
from docplatform.gitsync.runs import git_sync_run

pytestmark = pytest.mark.django_db


def settings_page(space) -> str:
    return f"/s/{space.pk}/settings"


@pytest.mark.slow
def test_an_admin_connects_syncs_and_sees_the_sync(
    client, space, remote, org_admin, django_capture_on_commit_callbacks
):
    client.force_login(org_admin)
    page = client.get(settings_page(space)).content.decode()
    assert "Connect a repository" in page and "No sync yet." in page

    saved = client.post(
        f"{settings_page(space)}/git",
        {"url": remote, "branch": "main", "sync_on_revision": "on"},
        follow=True,
    )
    assert "Git connection saved." in saved.content.decode()
    assert GitConnection.objects.get(space=space).sync_on_revision is True

    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(f"{settings_page(space)}/git/sync", follow=True)
    assert len(queued) == 1  # the task, sent after commit
    sync = GitSync.objects.get(space=space)
    assert f"Sync #{sync.pk} queued" in response.content.decode()
    git_sync_run(sync.pk)  # what the task does
    sync.refresh_from_db()

    page = client.get(settings_page(space)).content.decode()
    assert f"<code>{remote}</code>" in page.replace(' class="git-url"', "")
    assert 'data-status="success"' in page
    assert f'title="{sync.commit}"' in page
    assert "Sync now" in page and "Import" in page


def test_a_refused_address_is_shown_with_its_error_and_nothing_is_saved(
    client, space, git_root, org_admin
):
    client.force_login(org_admin)
    response = client.post(
        f"{settings_page(space)}/git", {"url": "/etc/passwd.git", "branch": "main"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="git-url-errors"' in page and "not an address this platform may sync" in page
    assert 'value="/etc/passwd.git"' in page  # the form as it was sent
    assert not GitConnection.objects.exists()


def test_the_page_says_whether_credentials_are_set_never_what_they_are(
    client, space, org_admin, settings
):
    settings.GIT_SYNC_ALLOWED = ["https://git.example.com/*"]
    client.force_login(org_admin)
    client.post(
        f"{settings_page(space)}/git",
        {
            "url": "https://git.example.com/docs.git",
            "branch": "main",
            "username": "docs-bot",
            "password": "s3cr3t-t0ken",
        },
    )
    page = client.get(settings_page(space)).content.decode()
    assert "set (never shown)" in page
    assert "s3cr3t-t0ken" not in page and "docs-bot" not in page


def test_import_without_a_connection_says_so(client, space, org_admin):
    client.force_login(org_admin)
    response = client.post(f"{settings_page(space)}/git/import", follow=True)
    assert "not connected to a Git repository" in response.content.decode()
    assert not GitSync.objects.exists()


@pytest.mark.parametrize("action", ["git", "git/disconnect", "git/sync", "git/import"])
def test_members_who_are_not_admins_cannot(client, space, connected, org_member, action, remote):
    client.force_login(org_member)
    response = client.post(f"{settings_page(space)}/{action}", {"url": "/elsewhere"})
    assert response.status_code == 403
    assert GitConnection.objects.get().url == remote
    assert not GitSync.objects.exists()


def test_other_people_get_404_and_the_forms_take_posts_only(
    client, space, connected, outsider, org_admin
):
    client.force_login(outsider)
    assert client.post(f"{settings_page(space)}/git/sync").status_code == 404
    assert not GitSync.objects.exists()
    client.force_login(org_admin)
    assert client.get(f"{settings_page(space)}/git/sync").status_code == 405
