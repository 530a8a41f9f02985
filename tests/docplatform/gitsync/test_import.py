""" "Import": the branch's Markdown files become a new revision when they differ."""

import pytest

from docplatform.content import MAX_PAGE_BYTES
from docplatform.events.models import Event
from docplatform.models import Revision
from docplatform.page_versions import page_dicts
from tests.docplatform.gitsync.conftest import clone, git, sync_events

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(connected, space, remote, run_sync, tmp_path):
    """Another client's working copy of the branch, after a first "Sync now"."""
    assert run_sync(space).status == "success"
    return clone(remote, tmp_path / "work")


def push(work, message="Their edit") -> str:
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", message, cwd=work)
    git("push", "--quiet", "origin", "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


@pytest.mark.slow
def test_a_commit_pushed_by_another_client_becomes_a_revision(work, space, run_sync, org_admin):
    with open(f"{work}/guide/install.md", "a") as file:
        file.write("Then restart it.\n")
    with open(f"{work}/faq.md", "w") as file:
        file.write("Intro line.\n\n# Questions asked\n\nNone yet.\n")  # no front matter
    commit = push(work, "Restart step and an FAQ")
    before = space.current_revision_id

    sync = run_sync(space, "import")

    assert sync.status == "success", sync.reason
    assert sync.commit == commit
    space.refresh_from_db()
    revision = space.current_revision
    assert sync.revision == revision and revision.pk != before
    assert revision.git_commit == commit
    assert revision.author == org_admin
    assert revision.message == f"Imported from Git: main at {commit[:12]} (Restart step and an FAQ)"
    assert page_dicts(revision.pk) == [
        {"path": "intro", "title": "Intro", "body": "# Welcome\n\nHello.\n"},
        {"path": "guide", "title": "Guide: the basics", "body": "Read **this**."},
        {"path": "guide/install", "title": "Install", "body": "Run it.\nThen restart it.\n"},
        {
            "path": "faq",
            "title": "Questions asked",
            "body": "Intro line.\n\n# Questions asked\n\nNone yet.\n",
        },
    ]
    updated = Event.objects.filter(type="space_content_updated").order_by("created_at").last()
    assert updated.payload == {"spaceId": space.pk, "revisionId": revision.pk}
    assert [kind for kind, _ in sync_events(space)][-2:] == [
        "space_gitsync_started",
        "space_gitsync_completed",
    ]
    completed = sync_events(space)[-1][1]
    assert (completed["status"], completed["revisionId"], completed["direction"]) == (
        "success",
        revision.pk,
        "import",
    )


@pytest.mark.slow
def test_a_branch_holding_the_space_as_it_is_makes_no_revision(work, space, run_sync):
    revisions = Revision.objects.count()
    sync = run_sync(space, "import")
    assert sync.status == "success"
    assert sync.revision is None
    assert Revision.objects.count() == revisions
    assert sync_events(space)[-1][1]["revisionId"] == space.current_revision_id


@pytest.mark.slow
def test_files_that_cannot_be_pages_are_skipped_by_name(work, space, run_sync):
    with open(f"{work}/latin1.md", "wb") as file:
        file.write("# Caf\xe9\n".encode("latin-1"))
    with open(f"{work}/huge.md", "w") as file:
        file.write("x" * (MAX_PAGE_BYTES + 1))
    with open(f"{work}/intro.md", "wb") as file:  # an existing page, now unreadable
        file.write(b"\xff\xfe broken")
    with open(f"{work}/Not a page.md", "w") as file:
        file.write("spaces in the name\n")
    with open(f"{work}/picture.png", "wb") as file:
        file.write(b"\x89PNG not Markdown: ignored")
    with open(f"{work}/extra.md", "w") as file:
        file.write("---\ntitle: A new page\n---\nFresh.\n")
    push(work)

    sync = run_sync(space, "import")

    assert sync.status == "success", sync.reason
    skipped = {skip["path"]: skip["reason"] for skip in sync.skipped}
    assert sorted(skipped) == ["Not a page.md", "huge.md", "intro.md", "latin1.md"]
    assert skipped["latin1.md"].startswith("not valid UTF-8")
    assert skipped["huge.md"].startswith("over 512 KiB")
    assert skipped["Not a page.md"].startswith("not a page path")
    pages = {page["path"]: page for page in page_dicts(sync.revision_id)}
    assert list(pages) == ["intro", "guide", "guide/install", "extra"]
    assert pages["intro"]["body"] == "# Welcome\n\nHello.\n"  # kept as the space has it
    assert pages["extra"] == {"path": "extra", "title": "A new page", "body": "Fresh.\n"}


@pytest.mark.slow
def test_a_missing_branch_fails_the_import(connected, space, run_sync):
    sync = run_sync(space, "import")  # the repository is empty: no branch yet
    assert sync.status == "failed"
    assert sync.reason == "the branch 'main' does not exist in the repository"
    assert sync_events(space)[-1][1]["reason"] == sync.reason


@pytest.mark.slow
def test_a_branch_without_pages_imports_nothing(work, space, run_sync):
    git("rm", "--quiet", "-r", ".", cwd=work)
    with open(f"{work}/README.txt", "w") as file:
        file.write("no Markdown here\n")
    push(work)
    revision = space.current_revision_id
    sync = run_sync(space, "import")
    assert sync.status == "failed"
    assert sync.reason == "the branch holds no Markdown page to import"
    space.refresh_from_db()
    assert space.current_revision_id == revision


@pytest.mark.slow
def test_an_export_after_an_import_writes_nothing_back(work, space, remote, run_sync):
    with open(f"{work}/intro.md", "w") as file:
        file.write("---\ntitle: Welcome\n---\nChanged in Git.\n")
    commit = push(work)
    assert run_sync(space, "import").status == "success"
    sync = run_sync(space)
    assert sync.status == "success"
    assert sync.commit == commit  # the branch held these pages: no new commit
