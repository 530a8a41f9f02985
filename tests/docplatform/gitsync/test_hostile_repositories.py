"""Repositories pushed to by someone hostile: front matter that would expand without end or
nest past any stack, titles that are not text, addresses that only look allowed, branch names
Git itself refuses, a database that fails a waiting sync; and a repository the sync creates
that `git clone` checks out."""

import pytest
from django.db import connection

from docplatform.gitsync.addresses import address_problem, branch_problem
from docplatform.gitsync.models import GitSync
from docplatform.gitsync.runs import git_sync_run
from docplatform.gitsync.services import git_sync_request
from docplatform.selectors import current_pages
from docplatform.tasks import run_git_sync
from tests.docplatform.gitsync.conftest import clone, git

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join([f'*{chr(97 + n)}'] * 9)}]\n" for n in range(15)
)


def push_files(remote, tmp_path, files: dict[str, str | bytes]) -> None:
    """Another client commits ``files`` (path: content) to main and pushes."""
    work = tmp_path / "pusher"
    git("init", "--quiet", "--initial-branch=main", str(work))
    for path, content in files.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "Pages", cwd=work)
    git("push", "--quiet", "--force", remote, "main", cwd=work)


@pytest.fixture
def hostile(remote, tmp_path):
    push_files(
        remote,
        tmp_path,
        {
            "intro.md": "---\ntitle: Intro\n---\n# Welcome\n",
            "bomb.md": f"---\n{ALIAS_BOMB}title: *p\n---\nBoom\n",
            "deep.md": "---\ntitle: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep\n",
            "listed.md": "---\ntitle: [a, b]\n---\nA list\n",
            "heavy.md": "---\ntitle: Heavy\nnote: " + "x" * (70 * 1024) + "\n---\nHeavy\n",
            "guide/install.md": "# Install\n\nRun it.\n",
        },
    )
    return remote


@pytest.mark.slow
@pytest.mark.django_db
def test_an_import_skips_each_hostile_file_with_its_reason_and_keeps_the_rest(
    space, connected, hostile, run_sync
):
    sync = run_sync(space, direction="import")

    assert sync.status == "success", sync.reason
    reasons = {skip["path"]: skip["reason"] for skip in sync.skipped}
    assert set(reasons) == {"bomb.md", "deep.md", "listed.md", "heavy.md"}
    assert "aliases" in reasons["bomb.md"]
    assert "nested more than" in reasons["deep.md"]
    assert "not text" in reasons["listed.md"]
    assert "front matter may be at most 64 KiB" in reasons["heavy.md"]
    imported = {page.path: page.title for page in current_pages(space)}
    assert imported["intro"] == "Intro"
    assert imported["guide/install"] == "Install"
    assert not {"bomb", "deep", "listed", "heavy"} & set(imported)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_next_sync_after_a_hostile_push_succeeds(space, connected, hostile, run_sync):
    assert run_sync(space, direction="import").status == "success"
    assert run_sync(space, direction="export").status == "success"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://git.acme.test/docs.git", True),
        ("https://GIT.acme.test/docs.git", True),
        ("https://169.254.169.254/latest/.acme.test/x", False),
        ("https://a.b.acme.test/docs.git", False),  # * is one DNS label
        ("https://git.acme.test/team/docs.git", False),  # * stays within one segment
        ("https://git.acme.test.evil.test/docs.git", False),
        ("https://git.acme.test:8443/docs.git", False),
    ],
)
def test_allowed_patterns_match_the_host_by_label_and_the_path_by_segment(settings, url, allowed):
    settings.GIT_SYNC_ALLOWED = ["https://*.acme.test/*"]
    assert (address_problem(url) is None) is allowed


def test_a_double_star_crosses_path_segments_and_local_paths_match_by_segment(settings, tmp_path):
    settings.GIT_SYNC_ALLOWED = ["https://git.acme.test/**", f"{tmp_path}/*"]
    assert address_problem("https://git.acme.test/team/docs.git") is None
    assert address_problem(f"{tmp_path}/docs.git") is None
    assert address_problem(f"{tmp_path}/nested/docs.git") is not None


@pytest.mark.parametrize(
    "branch", ["a//b", "HEAD", "a/", "a.", "@", "x@{1}", "x.lock", ".hidden", "a..b"]
)
def test_branch_names_follow_git_check_ref_format(branch):
    assert branch_problem(branch) is not None


@pytest.mark.parametrize("branch", ["main", "feature/new-docs", "v1.2", "release_2026"])
def test_ordinary_branch_names_pass(branch):
    assert branch_problem(branch) is None


@pytest.mark.slow
@pytest.mark.django_db
def test_an_export_to_a_new_repository_leaves_head_on_the_synced_branch(
    space, git_root, tmp_path, run_sync, org_admin
):
    from docplatform.gitsync.services import git_connection_set

    remote = git_root / "fresh.git"
    git("init", "--quiet", "--bare", "--initial-branch=master", str(remote))
    git_connection_set(space=space, url=str(remote), branch="main", user=org_admin)

    assert run_sync(space).status == "success"

    working = clone(str(remote), tmp_path / "clone")
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=working).strip() == "main"
    assert (tmp_path / "clone" / "intro.md").read_text().startswith("---\ntitle: Intro")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_waiting_sync_survives_a_database_error_and_runs_later(
    space, connected, org_admin, private_broker
):
    sync = git_sync_request(space=space, direction="export", requested_by=org_admin)
    private_broker.empty()  # the request's own task: this test runs it by hand
    connection.ensure_connection()
    connection.connection.close()  # the database goes away under the worker

    run_sync_task = run_git_sync.run
    run_sync_task(sync.pk)

    sync.refresh_from_db()
    assert sync.status == GitSync.Status.QUEUED  # not lost, not failed
    assert private_broker.tasks("default") == ["docplatform.tasks.run_git_sync"]
    assert git_sync_run(sync.pk).status == "success"


@pytest.mark.slow
@pytest.mark.django_db
def test_a_huge_file_is_skipped_within_the_memory_limit_and_fails_a_tighter_one(
    space, connected, remote, tmp_path, run_sync, settings
):
    push_files(
        remote,
        tmp_path,
        {"intro.md": "# Intro\n", "huge.md": b"# Huge\n" + b"\0" * (100 * 1024 * 1024)},
    )

    sync = run_sync(space, direction="import")
    assert sync.status == "success", sync.reason
    assert [skip["path"] for skip in sync.skipped] == ["huge.md"]
    assert "over 512 KiB" in sync.skipped[0]["reason"]

    settings.GIT_SYNC_MAX_MEMORY_MB = 96
    sync = run_sync(space, direction="import")
    assert sync.status == "failed"
    assert sync.reason == "the repository needed more than 96 MB of memory (GIT_SYNC_MAX_MEMORY_MB)"

    settings.GIT_SYNC_MAX_MEMORY_MB = 512
    assert run_sync(space, direction="import").status == "success"  # this worker went on


@pytest.mark.slow
@pytest.mark.django_db
def test_a_repository_of_five_thousand_files_is_refused_and_the_next_sync_succeeds(
    space, connected, remote, tmp_path, run_sync, settings
):
    settings.SPACE_MAX_PAGES = 1000
    push_files(remote, tmp_path, {f"pages/p{n}.md": f"# Page {n}\n" for n in range(5000)})

    sync = run_sync(space, direction="import")
    assert sync.status == "failed"
    assert sync.reason == (
        "the branch holds more than 1000 pages; a space holds at most 1000 (the operator's "
        "SPACE_MAX_PAGES setting)"
    )

    push_files(remote, tmp_path / "again", {"intro.md": "# Intro\n"})
    assert run_sync(space, direction="import").status == "success"


@pytest.mark.slow
@pytest.mark.django_db
def test_a_sync_that_runs_over_its_time_is_ended_with_the_limit_named(
    space, connected, tmp_path, run_sync, settings, git_root
):
    """A repository that never answers: an ssh "server" that accepts and says nothing."""
    import socket
    import threading

    from docplatform.gitsync.services import git_connection_set

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held = []  # the accepted connections, kept open and silent
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    port = listener.getsockname()[1]
    settings.GIT_SYNC_ALLOWED = [f"ssh://git@127.0.0.1:{port}/*"]
    settings.GIT_SYNC_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.GIT_SYNC_WORK_SECONDS = 2
    settings.GIT_SYNC_TIMEOUT_SECONDS = 60
    git_connection_set(
        space=space, url=f"ssh://git@127.0.0.1:{port}/docs.git", branch="main", user=None
    )
    try:
        sync = run_sync(space, direction="import")
    finally:
        listener.close()
    assert sync.status == "failed"
    assert sync.reason == (
        "the repository took longer than 2 s to read or write (GIT_SYNC_WORK_SECONDS)"
    )


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["https", "ssh"])
def test_a_sync_never_dials_a_private_address_unless_its_network_is_allowed(
    space, run_sync, settings, scheme
):
    """A server listens on loopback: the sync is refused before connecting, naming why; with
    its network allowed, the sync reaches it (and fails on what it answers)."""
    import socket

    from docplatform.gitsync.services import git_connection_set

    with socket.create_server(("127.0.0.1", 0)) as server:
        url = f"{scheme}://git@localhost:{server.getsockname()[1]}/docs.git"
        if scheme == "https":
            url = url.replace("git@", "")
        settings.GIT_SYNC_ALLOWED = [url]
        settings.GIT_SYNC_TIMEOUT_SECONDS = 1
        git_connection_set(space=space, url=url, branch="main", user=None)
        server.settimeout(0.2)

        sync = run_sync(space, direction="import")
        assert sync.status == "failed"
        assert sync.reason.startswith("refused address: localhost resolves to")
        assert "a loopback address (GIT_SYNC_ALLOWED_NETWORKS)" in sync.reason
        with pytest.raises(TimeoutError):
            server.accept()  # nothing connected

        settings.GIT_SYNC_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
        sync = run_sync(space, direction="import")
        assert sync.reason.startswith("repository unreachable:")
        server.accept()[0].close()  # this time it dialed
