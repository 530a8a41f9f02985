"""The part of a sync that touches the repository, run in a process of its own under a memory
and time limit (``confined.repository_work`` starts it: ``python -m docplatform.gitsync.work
<max memory MiB> <max CPU seconds>``), so a repository built to exhaust a worker ends this
process, never the worker.

It reads one JSON request on stdin and writes one JSON answer on stdout:

- ``{"direction": "import", "remote": {...}, "baseCommit"?}`` -> ``{"head", "subject",
  "pages", "skipped", "basePages"}`` (the pages at ``baseCommit``, the last synced one, when
  the branch still holds it; else null);
- ``{"direction": "export", "remote": {...}, "pages": [...], "message", "expectedHead"?}`` ->
  ``{"commit"}``, written on top of the head only if the head is still ``expectedHead``
  (when given: the head a merge was made against);
- a failure a person can act on -> ``{"failed": "<reason>"}``.

No database and no settings: what it needs comes in the request. Every address this process
dials must be public, or in the request's ``allowedNetworks`` (``GIT_SYNC_ALLOWED_NETWORKS``),
as webhook URLs must (``docplatform_sdk.addresses``): each name it resolves is checked where it
is resolved (so a redirect is checked too), and an ``ssh://`` host is resolved and checked here
and handed to ``ssh`` as the checked address.
"""

import ipaddress
import json
import resource
import socket
import sys
from dataclasses import replace
from urllib.parse import urlsplit

from docplatform_sdk.addresses import address_refusal, parse_networks

from .files import Skipped, file_path, is_page_file, page_file, page_from_file, page_path_of
from .repository import REGULAR_FILE_MODES, PushRejected, Remote, RepositoryUnreachable, fetched

#: The exit status of a process that ran out of memory (``confined`` names the limit).
MEMORY_EXIT = 3
#: Who writes the commits of an export.
IDENTITY = "docplatform <git-sync@docplatform.invalid>"


def _page_of(branch, path: str, mode: int, blob_id: bytes) -> dict | Skipped:
    """The page a file holds, or why it is skipped: whatever goes wrong with one file skips
    that file, never the whole import."""
    if mode not in REGULAR_FILE_MODES:
        return Skipped(path, "not a regular file (a link or a submodule)")
    try:
        return page_from_file(path, branch.read(blob_id))
    except (RepositoryUnreachable, MemoryError):
        raise
    except Exception as error:
        return Skipped(path, f"cannot be read ({type(error).__name__})")


class TooManyPages(Exception):
    pass


def _pages_of(branch, max_pages: int, commit: bytes | None = None) -> tuple[list[dict], list[dict]]:
    """The pages a commit of the branch holds (its head by default), and the files skipped;
    TooManyPages past ``max_pages``."""
    pages, skipped = [], []
    for path, mode, blob_id in branch.files(commit):
        if page_path_of(path) is None:
            continue  # not Markdown: not a page
        page = _page_of(branch, path, mode, blob_id)
        if isinstance(page, Skipped):
            skipped.append(page.as_json())
            continue
        pages.append(page)
        if len(pages) > max_pages:
            raise TooManyPages
    return pages, skipped


def read_branch(remote: Remote, base_commit: str = "", max_pages: int = 10_000) -> dict:
    """``max_pages``: the pages a space may hold (``SPACE_MAX_PAGES``, sent by the platform)."""
    with fetched(remote) as branch:
        if branch.head is None:
            return {"failed": f"the branch {remote.branch!r} does not exist in the repository"}
        try:
            pages, skipped = _pages_of(branch, max_pages)
            base = base_commit.encode() if base_commit else None
            base_pages = (
                _pages_of(branch, max_pages, base)[0]
                if base is not None and branch.has_commit(base)
                else None
            )
        except TooManyPages:
            return {
                "failed": f"the branch holds more than {max_pages} pages; a space holds at most "
                f"{max_pages} (the operator's SPACE_MAX_PAGES setting)"
            }
        subject = branch.commit_message().split("\n", 1)[0].strip()
        return {
            "head": branch.head.decode(),
            "subject": subject,
            "pages": pages,
            "skipped": skipped,
            "basePages": base_pages,
        }


def write_branch(remote: Remote, pages: list[dict], message: str, expected_head: str = "") -> dict:
    written = {file_path(page["path"]): page_file(page) for page in pages}
    with fetched(remote) as branch:
        if expected_head and (branch.head or b"").decode() != expected_head:
            return {
                "failed": "rejected push: someone pushed to the branch while this sync merged; "
                "sync again"
            }
        commit = branch.commit_files(written, is_page_file, message=message, identity=IDENTITY)
        head = commit or branch.head
    return {"commit": head.decode() if head else ""}


class RefusedAddress(OSError):
    """A name resolved to an address this process may not dial."""


def guard_network(allowed_networks: list[str]) -> None:
    """From now on, resolving a name to an address that is not public (and not allowed)
    raises RefusedAddress, before anything connects to it."""
    networks = parse_networks(allowed_networks)
    resolve = socket.getaddrinfo

    def checked(host, port, *args, **kwargs):
        found = resolve(host, port, *args, **kwargs)
        for info in found:
            address = ipaddress.ip_address(info[4][0].split("%")[0])
            if any(address in network for network in networks):
                continue
            reason = address_refusal(address)
            if reason:
                raise RefusedAddress(
                    f"{host} resolves to {address}, {reason} (GIT_SYNC_ALLOWED_NETWORKS)"
                )
        return found

    socket.getaddrinfo = checked


def pinned(remote: Remote) -> Remote:
    """The remote with its host resolved and checked before anything connects; an ``ssh://``
    one carries the checked address, which ``ssh`` dials (checking the host key under the
    host's name). An https:// host is checked again where urllib3 resolves it."""
    if remote.url.startswith("/"):
        return remote
    parts = urlsplit(remote.url)
    port = parts.port or (22 if parts.scheme == "ssh" else 443)
    found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    return replace(remote, address=found[0][4][0]) if parts.scheme == "ssh" else remote


def answer(request: dict) -> dict:
    guard_network(request.get("allowedNetworks", []))
    try:
        remote = pinned(Remote(**request["remote"]))
    except RefusedAddress as refused:
        return {"failed": f"refused address: {refused}"}
    except OSError as error:
        return {"failed": f"repository unreachable: {error}"}
    try:
        if request["direction"] == "export":
            return write_branch(
                remote, request["pages"], request["message"], request.get("expectedHead", "")
            )
        return read_branch(
            remote, request.get("baseCommit", ""), int(request.get("maxPages", 10_000))
        )
    except RepositoryUnreachable as error:
        return {"failed": f"repository unreachable: {error}"}
    except PushRejected as error:
        return {"failed": f"rejected push: {error}"}


def main(argv: list[str]) -> int:
    max_bytes = int(argv[1]) * 1024 * 1024
    cpu_seconds = int(argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    request = json.loads(sys.stdin.buffer.read())
    try:
        result = answer(request)
    except MemoryError:
        return MEMORY_EXIT
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
