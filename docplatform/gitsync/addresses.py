"""Which repositories and branches a space may sync with: checked when a connection is saved
and again when a sync runs (the operator may have changed ``GIT_SYNC_ALLOWED`` meanwhile).

An address is ``https://host/path``, ``ssh://[user@]host[:port]/path`` or an absolute path on
the worker's disk, and must match one of ``GIT_SYNC_ALLOWED`` (glob patterns): the scheme, the
user and the port as written, the host label by label (``*`` is one DNS label, so
``*.acme.test`` never matches ``169.254.169.254/x/.acme.test``) and the path segment by
segment (``*`` stays within one segment, ``**`` crosses them).
Anything a Git client would read as something else is refused: ``file://`` and other
transports (``ext::``, ``git://``, ``http://``), relative paths, ``..``, an address or host
starting with ``-`` (an option), and characters a remote shell would interpret.
"""

import os
import re
from urllib.parse import urlsplit

from django.conf import settings
from dulwich.refs import check_ref_format

MAX_ADDRESS_LENGTH = 2000
MAX_BRANCH_LENGTH = 255
#: Letters, digits and the punctuation of URLs and paths, nothing a shell interprets.
ADDRESS_CHARACTERS = re.compile(r"[A-Za-z0-9._~/:@%+-]+")
BRANCH_CHARACTERS = re.compile(r"[A-Za-z0-9._/-]+")
SCHEMES = ("https", "ssh")


def address_problem(url) -> str | None:
    """Why ``url`` cannot be a space's repository, or None."""
    if not isinstance(url, str) or not url.strip():
        return "is required"
    if len(url) > MAX_ADDRESS_LENGTH:
        return f"at most {MAX_ADDRESS_LENGTH} characters"
    if not ADDRESS_CHARACTERS.fullmatch(url):
        return (
            "letters, digits and . _ ~ / : @ % + - only (no spaces, quotes or other characters "
            "a shell would read)"
        )
    if url.startswith("-"):
        return "cannot start with '-'"
    problem = _local_path_problem(url) if url.startswith("/") else _url_problem(url)
    if problem:
        return problem
    if not settings.GIT_SYNC_ALLOWED:
        return "Git sync is not enabled here: the operator allows no address (GIT_SYNC_ALLOWED)"
    if not is_allowed(url):
        return "not an address this platform may sync with; allowed: " + ", ".join(
            settings.GIT_SYNC_ALLOWED
        )
    return None


def is_allowed(url: str) -> bool:
    return any(address_matches(url, pattern) for pattern in settings.GIT_SYNC_ALLOWED)


def _glob(pattern: str, *, one: str) -> re.Pattern:
    """``pattern`` as a regular expression: ``**`` any text, ``*`` any text of ``one``'s
    characters, ``?`` one of them; everything else as written."""
    parts = []
    for piece in re.split(r"(\*\*|\*|\?)", pattern):
        if piece == "**":
            parts.append(".*")
        elif piece == "*":
            parts.append(f"{one}*")
        elif piece == "?":
            parts.append(one)
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts), re.S)


def _host_matches(host: str, pattern: str) -> bool:
    """Label by label: a ``*`` never matches a dot, so it is one DNS label (or part of one)."""
    return bool(_glob(pattern.lower(), one=r"[^./]").fullmatch(host.lower()))


def _path_matches(path: str, pattern: str) -> bool:
    return bool(_glob(pattern, one=r"[^/]").fullmatch(path))


def address_matches(url: str, pattern: str) -> bool:
    """Whether ``url`` (a checked address) is one ``pattern`` of GIT_SYNC_ALLOWED allows."""
    if url.startswith("/") or pattern.startswith("/"):
        return url.startswith("/") and pattern.startswith("/") and _path_matches(url, pattern)
    try:
        have, want = urlsplit(url), urlsplit(pattern)
        same_port = have.port == want.port
    except ValueError:
        return False
    return (
        same_port
        and have.scheme.lower() == want.scheme.lower()
        and (have.username or "") == (want.username or "")
        and _host_matches(have.hostname or "", want.hostname or "")
        and _path_matches(have.path, want.path)
        and not have.query
        and not have.fragment
    )


def _local_path_problem(path: str) -> str | None:
    if ".." in path.split("/") or os.path.normpath(path) != path:
        return "give the path in its plain form: no '..', '.', '//' or trailing '/'"
    return None


def _url_problem(url: str) -> str | None:
    scheme, separator, _ = url.partition("://")
    if not separator:
        return "an https:// or ssh:// address, or an absolute path (/srv/git/docs.git)"
    if scheme.lower() not in SCHEMES:
        return f"{scheme}:// is not accepted: an https:// or ssh:// address"
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return "the port must be a number"
    host = parts.hostname or ""
    if not host or host.startswith("-"):
        return "name the host (it cannot start with '-')"
    if parts.password is not None or (scheme == "https" and parts.username is not None):
        return "give the username and password as credentials, not in the address"
    if port == 0 or not parts.path.strip("/") or ".." in parts.path.split("/"):
        return "name the repository's path on the host (no '..')"
    return None


def branch_problem(branch) -> str | None:
    """Why ``branch`` is not a branch name a sync may write, or None: the rules of
    ``git check-ref-format --branch`` (no empty part, so no ``//`` and no trailing ``/``;
    not ``HEAD``, no ``@{``, no part starting with ``.`` or ending with ``.lock``, no ``..``,
    not ending with ``.``), within the characters a shell never reads."""
    if not isinstance(branch, str) or not branch:
        return "is required"
    if len(branch) > MAX_BRANCH_LENGTH:
        return f"at most {MAX_BRANCH_LENGTH} characters"
    if (
        not BRANCH_CHARACTERS.fullmatch(branch)
        or branch.startswith(("-", "/"))
        or branch in ("HEAD", "@")
        or "" in branch.split("/")
        or branch.endswith(".")
        or not check_ref_format(b"refs/heads/" + branch.encode())
    ):
        return (
            "a branch name: letters, digits, '.', '_', '-' and '/', not starting with '-' or "
            "'/', not HEAD, without '..' or '//', and no part starting with '.' or ending with "
            "'.lock'"
        )
    return None
