"""A space's branch, fetched and written with dulwich (pure Python): the one module that
talks to a repository. No shell and no ``git`` binary; an ``ssh://`` address runs the ``ssh``
client with an argument list (dulwich's vendor), never a shell string.

A sync fetches the branch into a temporary bare repository, reads its files or makes one
commit on top of its head, and pushes that commit only if the branch still points where it
was fetched from (a push racing another one is rejected, never forced).
"""

import shlex
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from dulwich.client import (
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    LocalGitClient,
    SSHGitClient,
    StrangeHostname,
    Urllib3HttpGitClient,
)
from dulwich.errors import GitProtocolError, NotGitRepository, SendPackError
from dulwich.index import commit_tree
from dulwich.object_store import iter_tree_contents
from dulwich.objects import ZERO_SHA, Blob, Commit
from dulwich.repo import Repo

REGULAR_FILE_MODES = (0o100644, 0o100755)
FILE_MODE = 0o100644


class RepositoryUnreachable(Exception):
    """The repository could not be read or written (no repository there, refused
    credentials, a network error or timeout)."""


class PushRejected(Exception):
    """The repository refused the commit (the branch moved since it was fetched, a hook)."""


#: What a transport raises when the repository cannot be reached or read.
TRANSPORT_ERRORS = (
    OSError,
    GitProtocolError,
    NotGitRepository,
    HTTPUnauthorized,
    HTTPProxyUnauthorized,
    StrangeHostname,
    urllib3.exceptions.HTTPError,
)


@dataclass(frozen=True)
class Remote:
    """Where a sync reads and writes: an address (checked by ``addresses``), a branch and
    the credentials of an https:// address."""

    url: str
    branch: str
    timeout: float
    username: str = ""
    password: str = ""
    #: An ssh:// host's address as resolved and checked (``work.pinned``): what ssh dials.
    address: str = ""

    @property
    def ref(self) -> bytes:
        return b"refs/heads/" + self.branch.encode()


def _client(remote: Remote) -> tuple[GitClient, str]:
    if remote.url.startswith("/"):
        return LocalGitClient(), remote.url
    parts = urlsplit(remote.url)
    if parts.scheme == "https":
        client = Urllib3HttpGitClient(
            remote.url,
            username=remote.username or None,
            password=remote.password or None,
            timeout=remote.timeout,
        )
        # One try per request: a server that does not answer costs the timeout, not 4 times it.
        client.pool_manager.connection_pool_kw["retries"] = urllib3.Retry(total=0)
        return client, parts.path
    # ssh://: the worker's ssh client and keys, never prompting, bounded in time.
    seconds = max(1, round(remote.timeout))
    options = ["BatchMode=yes", f"ConnectTimeout={seconds}", f"ServerAliveInterval={seconds}"]
    if remote.address:
        options.append(f"HostKeyAlias={parts.hostname}")
    command = shlex.join(["ssh", *(part for option in options for part in ("-o", option))])
    client = SSHGitClient(
        remote.address or parts.hostname,
        port=parts.port,
        username=parts.username,
        ssh_command=command,
    )
    return client, parts.path


def describe(error: Exception) -> str:
    """A transport error in a sentence for the sync's history."""
    if isinstance(error, NotGitRepository):
        return "no Git repository at this address"
    if isinstance(error, HTTPUnauthorized | HTTPProxyUnauthorized):
        return "the repository refused the credentials (HTTP 401)"
    if isinstance(error, TimeoutError):
        return "no answer in time"
    return f"{type(error).__name__}: {error}".rstrip(": ")


@dataclass
class Branch:
    """A branch as fetched: its head commit (None when the branch does not exist yet) and
    the objects to read it and build a commit on top of it."""

    remote: Remote
    repo: Repo
    client: GitClient
    path: str
    head: bytes | None
    #: The repository held no branch at all when fetched: a push makes its first one.
    empty: bool = False

    def files(self, commit: bytes | None = None) -> Iterator[tuple[str, int, bytes]]:
        """(path, mode, blob id) of every file of the head's tree (or ``commit``'s)."""
        commit = commit or self.head
        if commit is None:
            return
        tree = self.repo[commit].tree
        for entry in iter_tree_contents(self.repo.object_store, tree):
            yield entry.path.decode("utf-8", "surrogateescape"), entry.mode, entry.sha

    def read(self, blob_id: bytes) -> bytes:
        return self.repo[blob_id].data

    def has_commit(self, commit: bytes) -> bool:
        """Whether ``commit`` came with the branch (an ancestor of its head)."""
        try:
            return self.repo[commit].type_name == b"commit"
        except KeyError:
            return False

    def commit_files(
        self,
        written: dict[str, bytes],
        replaced: Callable[[str], bool],
        *,
        message: str,
        identity: str,
    ) -> bytes | None:
        """Commit on top of the head a tree holding ``written`` (path: content) and every
        file of the head's tree that ``replaced`` does not claim (those it claims and that
        are not written are deleted); push it. None when the tree would not change (no empty
        commit)."""
        entries = {
            path: (mode, blob_id)
            for path, mode, blob_id in self.files()
            if not (mode in REGULAR_FILE_MODES and replaced(path))
        }
        for path, content in written.items():
            blob = Blob.from_string(content)
            self.repo.object_store.add_object(blob)
            entries[path] = (FILE_MODE, blob.id)
        tree = commit_tree(
            self.repo.object_store,
            [(path.encode(), blob_id, mode) for path, (mode, blob_id) in sorted(entries.items())],
        )
        if self.head is not None and self.repo[self.head].tree == tree:
            return None
        commit = Commit()
        commit.tree = tree
        commit.parents = [self.head] if self.head else []
        commit.author = commit.committer = identity.encode()
        commit.author_time = commit.commit_time = int(time.time())
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.encode()
        self.repo.object_store.add_object(commit)
        self._push(commit.id)
        if self.empty:
            self._point_head_at_branch()
        return commit.id

    def _point_head_at_branch(self) -> None:
        """A repository whose first branch this sync wrote gets its HEAD on that branch, so a
        ``git clone`` checks it out (``git init`` leaves HEAD on ``master``). The push protocol
        cannot move a server's HEAD: only a repository on the worker's disk is set here; a
        hosting service takes the first branch pushed as its default."""
        if isinstance(self.client, LocalGitClient):
            with Repo(self.path) as target:
                target.refs.set_symbolic_ref(b"HEAD", self.remote.ref)

    def commit_message(self) -> str:
        """The head commit's message (empty without a head)."""
        if self.head is None:
            return ""
        return self.repo[self.head].message.decode("utf-8", "replace")

    def _push(self, commit_id: bytes) -> None:
        expected = self.head or ZERO_SHA

        def update_refs(refs: dict) -> dict:
            if refs.get(self.remote.ref, ZERO_SHA) != expected:
                raise PushRejected(
                    "someone pushed to the branch while this sync ran; sync again to write on "
                    "top of their commit"
                )
            return {self.remote.ref: commit_id}

        try:
            result = self.client.send_pack(
                self.path, update_refs, generate_pack_data=self.repo.generate_pack_data
            )
        except SendPackError as error:
            raise PushRejected(f"the repository refused the push: {error}") from error
        except TRANSPORT_ERRORS as error:
            raise RepositoryUnreachable(describe(error)) from error
        refusals = [status for status in (result.ref_status or {}).values() if status]
        if refusals:
            raise PushRejected(f"the repository refused the push: {'; '.join(refusals)}")


@contextmanager
def fetched(remote: Remote) -> Iterator[Branch]:
    """The branch fetched into a temporary bare repository, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="docplatform-git-") as folder:
        repo = Repo.init_bare(folder)
        try:
            client, path = _client(remote)

            def wants(refs, depth=None) -> list[bytes]:
                head = refs.get(remote.ref)
                return [head] if head and head != ZERO_SHA else []

            try:
                result = client.fetch(path, repo, determine_wants=wants)
            except TRANSPORT_ERRORS as error:
                raise RepositoryUnreachable(describe(error)) from error
            head = result.refs.get(remote.ref)
            empty = not any(
                name.startswith(b"refs/") and sha != ZERO_SHA for name, sha in result.refs.items()
            )
            yield Branch(
                remote, repo, client, path, head if head != ZERO_SHA else None, empty=empty
            )
        finally:
            repo.close()
