"""Git sync that merges (issue 31, point 5): since the last sync, a commit pushed with git and
an edit in the space both survive an export (in the branch and in the space) and an import;
changes that overlap write nothing anywhere and name the pages; the sync's history shows
each merge."""

import pytest

from docplatform.documents.services import page_save
from docplatform.gitsync.models import GitConnection
from docplatform.selectors import current_pages
from tests.docplatform.gitsync.conftest import clone, git

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(connected, space, remote, run_sync, tmp_path):
    """Another client's working copy, after a first "Sync now" (the base of the merges)."""
    assert run_sync(space).status == "success"
    return clone(remote, tmp_path / "work")


def push(work, path, text, message="Their edit") -> str:
    with open(f"{work}/{path}", "w") as file:
        file.write(text)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", message, cwd=work)
    git("push", "--quiet", "origin", "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


def edit_in_space(space, person, path, title, body):
    space.refresh_from_db()
    page_save(
        space=space, path=path, title=title, body=body, author=person,
        based_on=space.current_revision_id,
    )  # fmt: skip


def in_branch(remote, path) -> str:
    return git("--git-dir", remote, "show", f"main:{path}")


def in_space(space) -> dict[str, str]:
    space.refresh_from_db()
    return {page.path: page.body for page in current_pages(space)}


@pytest.mark.slow
def test_a_pushed_commit_and_an_edit_in_the_space_both_survive_an_export(
    work, space, remote, run_sync, org_admin
):
    pushed = push(work, "guide/install.md", "---\ntitle: Install\n---\nRun it.\nRestart it.\n")
    edit_in_space(space, org_admin, "intro", "Intro", "# Welcome\n\nHello, edited in the space.\n")

    sync = run_sync(space)

    assert sync.status == "success", sync.reason
    assert sync.merged
    assert git("--git-dir", remote, "rev-parse", "main~1").strip() == pushed  # on top of theirs
    assert "Restart it." in in_branch(remote, "guide/install.md")
    assert "edited in the space" in in_branch(remote, "intro.md")
    pages = in_space(space)
    assert pages["guide/install"] == "Run it.\nRestart it.\n"
    assert "edited in the space" in pages["intro"]
    assert space.current_revision.git_commit == sync.commit
    assert GitConnection.objects.get(space=space).synced_commit == sync.commit


@pytest.mark.slow
def test_an_import_keeps_the_spaces_edits_made_since_the_last_sync(
    work, space, remote, run_sync, org_admin
):
    push(work, "guide/install.md", "---\ntitle: Install\n---\nRun it.\nRestart it.\n")
    edit_in_space(space, org_admin, "intro", "Intro", "# Welcome\n\nHello, edited in the space.\n")

    sync = run_sync(space, "import")

    assert sync.status == "success", sync.reason
    pages = in_space(space)
    assert pages["guide/install"] == "Run it.\nRestart it.\n"
    assert "edited in the space" in pages["intro"]
    assert [page.path for page in current_pages(space)] == ["intro", "guide", "guide/install"]


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["export", "import"])
def test_overlapping_changes_write_nothing_anywhere_and_name_the_page(
    work, space, remote, run_sync, org_admin, direction, client
):
    pushed = push(work, "intro.md", "---\ntitle: Intro\n---\n# Welcome\n\nHello from git.\n")
    edit_in_space(space, org_admin, "intro", "Intro", "# Welcome\n\nHello from the space.\n")
    space.refresh_from_db()
    before = space.current_revision_id

    sync = run_sync(space, direction)

    assert sync.status == "failed"
    assert sync.reason.startswith("conflict: the branch and the space both changed intro")
    assert sync.conflicts == [
        {
            "page": "intro",
            "hunks": [
                {
                    "field": "body",
                    "base": "Hello.\n",
                    "theirs": "Hello from git.\n",
                    "mine": "Hello from the space.\n",
                }
            ],
        }
    ]
    assert git("--git-dir", remote, "rev-parse", "main").strip() == pushed  # branch untouched
    space.refresh_from_db()
    assert space.current_revision_id == before  # space untouched
    # The branch's side waits in a change request, for a person to resolve.
    change_request = sync.change_request
    assert change_request.status == "open" and change_request.author == org_admin
    assert "intro" in change_request.description
    head = change_request.revisions.order_by("-created_at", "-id").first()
    assert {page["path"]: page["body"] for page in head.pages}["intro"] == (
        "# Welcome\n\nHello from git.\n"
    )
    assert [page["path"] for page in head.pages] == ["intro", "guide", "guide/install"]
    client.force_login(org_admin)
    settings_page = client.get(f"/s/{space.pk}/settings").content.decode()
    assert "Merged: the branch and the space had both changed" in settings_page
    assert "<code>intro</code>: 1 overlapping change" in settings_page
    assert f"/s/{space.pk}/~cr/{change_request.number}/" in settings_page


@pytest.mark.slow
def test_with_nothing_changed_in_git_an_export_writes_the_space_as_before(
    work, space, remote, run_sync, org_admin
):
    edit_in_space(space, org_admin, "intro", "Intro", "# Welcome\n\nOnly the space changed.\n")
    sync = run_sync(space)
    assert sync.status == "success" and not sync.merged
    assert "Only the space changed." in in_branch(remote, "intro.md")
