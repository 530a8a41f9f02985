"""Where the command line finds the platform's API and a personal token: ``--api`` and
``--token``, else ``DOCPLATFORM_API`` and ``DOCPLATFORM_TOKEN``, else the login ``login``
saved in the user's config folder (``$XDG_CONFIG_HOME/docplatform/config.json``, or
``~/.config/docplatform/config.json``; the file mode 600, its folder 700).

A saved token is only ever sent to the API it was saved for: another ``--api`` needs its own
token.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import UsageError

NOT_LOGGED_IN = (
    "not logged in: run docplatform-integration login, or give --api and --token "
    "(DOCPLATFORM_API, DOCPLATFORM_TOKEN)"
)


@dataclass(frozen=True)
class Credentials:
    api: str
    token: str


def config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "docplatform" / "config.json"


def normalized_api(url: str) -> str:
    """``https://host/api/v1/`` -> ``https://host/api/v1``; UsageError for what is no URL."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--api {url}: give the API's URL, e.g. https://HOST/api/v1")
    return url


def saved_login() -> Credentials | None:
    """The login saved by ``login``; None when there is none. UsageError names a broken file."""
    path = config_file()
    try:
        data = json.loads(path.read_text())
        return Credentials(api=normalized_api(data["api"]), token=str(data["token"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, UsageError) as exc:
        raise UsageError(
            f"{path} cannot be read ({exc.__class__.__name__}): log in again, or remove it"
        ) from exc


def save_login(credentials: Credentials) -> Path:
    """Write the login, readable by the user only (folder 700, file 600, replaced at once)."""
    path = config_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({"api": credentials.api, "token": credentials.token}, file)
    os.replace(temporary, path)
    return path


def remove_login() -> Path | None:
    """Remove the saved login; its path, or None when there was none."""
    path = config_file()
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def resolved(api: str | None, token: str | None) -> Credentials:
    """The API and token a command uses: options, then the environment, then the saved login
    (whose token goes only to its own API)."""
    api = api or os.environ.get("DOCPLATFORM_API") or None
    token = token or os.environ.get("DOCPLATFORM_TOKEN") or None
    api = normalized_api(api) if api else None
    if api and token:
        return Credentials(api=api, token=token)
    saved = saved_login()
    if saved is None:
        if api:
            raise UsageError(
                "give a personal API token with --token or DOCPLATFORM_TOKEN (or log in)"
            )
        raise UsageError(NOT_LOGGED_IN)
    if api and api != saved.api:
        raise UsageError(
            f"the saved login is for {saved.api}, not {api}: give --token, or log in to {api}"
        )
    return Credentials(api=api or saved.api, token=token or saved.token)
