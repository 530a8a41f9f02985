"""The platform's REST API as the command line calls it: a personal token, JSON answers, and
a refusal printed the way the API words it (``field: reason``) before Refused ends the
command with exit 1."""

import contextlib
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import parse_qsl, urlsplit

import requests

from .credentials import Credentials
from .errors import Refused
from .output import warn

TIMEOUT_SECONDS = 30
PAGE_LIMIT = 500  # the API's largest page
UPLOAD_TIMEOUT_SECONDS = 60
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


def problem_lines(body) -> list[str]:
    """The API's error body as lines: ``attr: detail``, or the detail alone."""
    errors = body.get("errors", []) if isinstance(body, dict) else []
    return [
        f"{error['attr']}: {error['detail']}" if error.get("attr") else str(error.get("detail"))
        for error in errors
        if isinstance(error, dict)
    ]


class ApiRefused(Refused):
    """The API answered with an error status; ``status`` and the API's ``problems``."""

    def __init__(self, message: str, status: int, problems: list[str]):
        super().__init__(message)
        self.status = status
        self.problems = problems


class Platform:
    """Calls to one platform's API with one personal token."""

    def __init__(self, credentials: Credentials, *, show: Callable[[str], object] = print):
        self.api = credentials.api
        self.show = show  # where the API's reasons for a refusal are printed
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {credentials.token}"
        self.session.headers["Accept"] = "application/json"
        self.server_time = datetime.now(UTC)  # the Date of the last answer, when it had one
        host = urlsplit(self.api).hostname or ""
        if urlsplit(self.api).scheme == "http" and host not in LOOPBACK_HOSTS:
            warn(f"warning: {self.api} is plain http: the token travels in clear; use https")

    def call(self, method: str, path: str, *, action: str, expect=(200,), timeout=None, **kw):
        """The JSON answer (None for an empty one) of ``method path`` when its status is in
        ``expect``; otherwise the reasons are printed and ApiRefused says ``action`` was
        refused."""
        url = f"{self.api}/{path.lstrip('/')}"
        try:
            answer = self.session.request(
                method, url, timeout=timeout or TIMEOUT_SECONDS, allow_redirects=False, **kw
            )
        except requests.RequestException as exc:
            raise Refused(f"{self.api} cannot be reached ({exc.__class__.__name__})") from exc
        self._note_time(answer.headers.get("Date"))
        if not answer.content and answer.status_code in expect:
            return None
        try:
            body = answer.json()
        except ValueError:
            raise ApiRefused(
                f"the API answered {answer.status_code} without a JSON body "
                f"(is {self.api} the API's URL, e.g. https://HOST/api/v1?)",
                answer.status_code,
                [],
            ) from None
        if answer.status_code in expect:
            return body
        problems = problem_lines(body)
        for line in problems:
            self.show(line)
        raise ApiRefused(
            f"{action} was refused ({answer.status_code})", answer.status_code, problems
        )

    def _note_time(self, date: str | None) -> None:
        with contextlib.suppress(TypeError, ValueError):
            self.server_time = parsedate_to_datetime(date)

    def get(self, path: str, *, action: str, **params):
        return self.call("GET", path, action=action, params=params or None)

    def rows(self, path: str, *, action: str, **params):
        """Every row of a paginated list: ``results`` page after page, each asked with the
        query of the previous answer's ``next`` link (its ``offset``, or its ``cursor`` for
        the lists paged by cursor: events, deliveries), on this API's own address."""
        query = {**params, "limit": PAGE_LIMIT}
        while True:
            page = self.get(path, action=action, **query)
            yield from page["results"]
            if not page.get("next"):
                return
            query = dict(parse_qsl(urlsplit(page["next"]).query))


def to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
