"""``login`` (check a personal token and save it), ``logout`` and ``whoami``."""

import argparse
import getpass
import os
import sys

from .api import ApiRefused, Platform
from .credentials import Credentials, normalized_api, remove_login, save_login, saved_login
from .errors import Refused, UsageError
from .output import print_json, say
from .session import add_api_arguments, platform_for

TOKEN_PROMPT = "Personal API token (marketplace > Developer settings > Make token): "  # noqa: S105 - a prompt


def read_token() -> str:
    """The token from a prompt that does not echo it; from stdin's first line when stdin is
    not a terminal (``... | docplatform-integration login``)."""
    try:
        return getpass.getpass(TOKEN_PROMPT) if sys.stdin.isatty() else sys.stdin.readline()
    except EOFError:
        return ""


def read_api() -> str:
    if not sys.stdin.isatty():
        raise UsageError("give the API's URL with --api or DOCPLATFORM_API")
    try:
        return input("API URL (https://HOST/api/v1): ")
    except EOFError:
        return ""


def caller(platform: Platform, *, action: str) -> dict:
    """``GET /me/``: the caller and their organizations; Refused when the answer is not the
    platform's (another service at that URL)."""
    me = platform.get("me/", action=action)
    if not (
        isinstance(me, dict)
        and isinstance(me.get("username"), str)
        and isinstance(me.get("organizations"), list)
    ):
        raise Refused(f"{platform.api}/me/ is not a docplatform API: check --api")
    return me


def run_login(options) -> None:
    api = options.api or os.environ.get("DOCPLATFORM_API") or read_api()
    if not api.strip():
        raise UsageError("give the API's URL with --api or DOCPLATFORM_API")
    credentials = Credentials(
        api=normalized_api(api),
        token=(options.token or os.environ.get("DOCPLATFORM_TOKEN") or read_token()).strip(),
    )
    if not credentials.token:
        raise UsageError("no token given: make one in the marketplace's Developer settings")
    try:
        me = caller(Platform(credentials, show=lambda line: None), action="login")
    except ApiRefused as exc:
        if exc.status in (401, 403):
            raise Refused(
                f"{credentials.api} refused the token ({exc.status}): make a new one in the "
                "marketplace's Developer settings"
            ) from exc
        raise
    path = save_login(credentials)
    say(f"logged in to {credentials.api} as {me['username']}", "ok")
    say(f"saved in {path}")


LOGIN_QUESTION = "No login found: log in now, to publish it and try it on a platform? [Y/n] "
LOGIN_LATER = (
    "not logged in: to try it on a platform, run docplatform-integration login "
    "--api https://HOST/api/v1 (a token from the marketplace's Developer settings)"
)


def logged_in() -> bool:
    """Whether commands find a platform and a token without options: ``DOCPLATFORM_API`` and
    ``DOCPLATFORM_TOKEN``, or a saved login (a file that cannot be read counts as none)."""
    if os.environ.get("DOCPLATFORM_API") and os.environ.get("DOCPLATFORM_TOKEN"):
        return True
    try:
        return saved_login() is not None
    except UsageError:
        return False


def offer_login() -> None:
    """When no login is found: on a terminal, ask whether to log in now (Enter: yes) and do;
    otherwise print how to, never waiting for an answer. A refused login is said, not
    raised: what came before it (the scaffold) is done."""
    if logged_in():
        return
    if not sys.stdin.isatty():
        say(LOGIN_LATER)
        return
    try:
        answer = input(LOGIN_QUESTION).strip().lower()
        if answer not in ("", "y", "yes"):
            say(LOGIN_LATER)
            return
        run_login(argparse.Namespace(api=None, token=None))
    except (EOFError, KeyboardInterrupt):
        print()
        say(LOGIN_LATER)
    except (Refused, UsageError) as exc:
        say(f"not logged in: {exc}; log in later with docplatform-integration login")


def run_logout(options) -> None:
    path = remove_login()
    say(f"logged out: removed {path}" if path else "not logged in: nothing to remove")


def run_whoami(options) -> None:
    platform = platform_for(options)
    me = caller(platform, action="whoami")
    if options.json:
        print_json(
            {"username": me["username"], "organizations": me["organizations"], "api": platform.api}
        )
        return
    say(me["username"], "bold")
    for membership in me["organizations"]:
        say(f"  {membership['subdomain']} ({membership['role']}): {membership['title']}")
    if not me["organizations"]:
        say("  no organization")
    say(f"api: {platform.api}")


def add_parsers(actions) -> None:
    login = actions.add_parser(
        "login", help="Check a personal API token and save it with the API's URL."
    )
    login.add_argument("--api", help="The REST API, e.g. https://HOST/api/v1 (DOCPLATFORM_API).")
    login.add_argument(
        "--token",
        help="The token (DOCPLATFORM_TOKEN); without it, a prompt that does not echo it.",
    )
    login.set_defaults(run=run_login)

    logout = actions.add_parser("logout", help="Remove the saved login.")
    logout.set_defaults(run=run_logout)

    whoami = actions.add_parser("whoami", help="The user, organizations and API you act as.")
    add_api_arguments(whoami, json_help="Print them as JSON.")
    whoami.set_defaults(run=run_whoami)
