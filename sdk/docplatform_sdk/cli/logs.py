"""``tail``: an integration's logs (what its code printed, each call's outcome), followed as
they arrive; ``dev`` shows them the same way. Read from the platform's logs API, page by page
with its ``after`` cursor."""

import json
import re
import time
from datetime import datetime
from pathlib import Path

from ..manifest import MANIFEST_FILENAME
from ..manifest.yamlload import load_manifest_yaml
from .api import ApiRefused, Platform
from .errors import Refused, UsageError
from .output import paint, say, warn
from .session import add_api_arguments, platform_for

FOLLOW_SECONDS = 0.5
PAGE = 500  # the API's largest page
LATEST = 20  # the lines tail shows first without --since
DURATION = re.compile(r"^\d+[smhd]$")
OUTCOME_STYLES = {"ok": "ok", "error": "error", "timeout": "error"}
KINDS = ("event", "fetch", "ui_render", "completion", "oauth", "not_delivered")
OUTCOMES = ("ok", "error", "timeout", "refused", "not_delivered")


def since_value(text: str) -> str:
    """``--since``: a duration back from now (``30s``, ``15m``, ``2h``, ``7d``) or an ISO 8601
    time; UsageError otherwise."""
    if DURATION.fullmatch(text):
        return text
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--since {text}: give a duration (30s, 15m, 2h, 7d) or an ISO 8601 time"
        ) from None
    return text


def local_time(text: str) -> str:
    try:
        return datetime.fromisoformat(text).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return text


def item_lines(item: dict, *, installation: bool = True) -> list[str]:
    """One log item as the terminal shows it: a head line, then what the code printed
    (``|``) and the error (``!``)."""
    what = item.get("event") or item.get("request") or ""
    if item.get("test") is True:  # a sample event (trigger, Send test event)
        what += " (test)"
    status = f" {item['status']}" if item.get("status") is not None else ""
    duration = f" {item['durationMs']} ms" if item.get("durationMs") is not None else ""
    where = f" [{item['installationId']}]" if installation else ""
    outcome = paint(item["outcome"], OUTCOME_STYLES.get(item["outcome"], "warning"))
    head = (
        f"{local_time(item['time'])} {item['kind']} {what} {outcome}{status}{duration}"
        f" v{item.get('version')}{where}"
    )
    lines = [re.sub(r"  +", " ", head)]
    lines += [f"  | {line}" for line in (item.get("output") or "").rstrip("\n").splitlines()]
    lines += [f"  ! {line}" for line in (item.get("error") or "").rstrip("\n").splitlines()]
    return lines


class LogFollower:
    """The new items of one logs resource at each ``poll``: from ``since`` (else the latest
    ``LATEST``) first, then after the API's cursor."""

    def __init__(self, platform: Platform, path: str, *, since: str | None, **filters):
        self.platform = platform
        self.path = path
        self.since = since
        self.filters = {key: value for key, value in filters.items() if value}
        self.cursor: str | None = None
        self._unreachable = False

    def poll(self) -> list[dict]:
        """Every item newer than the last poll (all pages). Refused when the API refuses; an
        unreachable API is warned about once and tried again at the next poll."""
        items: list[dict] = []
        while True:
            params = {**self.filters, "limit": PAGE}
            latest_only = not self.cursor and not self.since
            if self.cursor:
                params["after"] = self.cursor
            elif self.since:
                params["since"] = self.since
            else:
                params["limit"] = LATEST
            try:
                body = self.platform.get(self.path, action="tail", **params)
            except ApiRefused:
                raise
            except Refused as exc:
                if not self._unreachable:
                    warn(f"warning: {exc}; trying again")
                self._unreachable = True
                return items
            if self._unreachable:
                say(f"{self.platform.api} is reachable again")
                self._unreachable = False
            items += body["items"]
            self.cursor = body["next"] or self.cursor
            if latest_only or len(body["items"]) < params["limit"]:
                return items


def manifest_name(folder: Path) -> str | None:
    """The ``name`` in the folder's manifest, if it has a readable one."""
    path = folder / MANIFEST_FILENAME
    if not path.is_file():
        return None
    document = load_manifest_yaml(path.read_bytes(), path.name).document
    name = document.get("name") if isinstance(document, dict) else None
    return name if isinstance(name, str) else None


def logs_path(name: str | None, installation: str | None) -> tuple[str, dict]:
    """The logs resource for NAME (``?installation=`` narrowing it) or for one installation."""
    if name:
        return f"integrations/{name}/logs/", {"installation": installation}
    if installation:
        return f"installations/{installation}/logs/", {}
    found = manifest_name(Path("."))
    if found is None:
        raise UsageError(
            "give the integration's NAME or --installation ID (or run tail in the "
            "integration's folder)"
        )
    return f"integrations/{found}/logs/", {}


def run_tail(options) -> None:
    platform = platform_for(options)
    path, narrowing = logs_path(options.name, options.installation)
    follower = LogFollower(
        platform,
        path,
        since=since_value(options.since) if options.since else None,
        kind=options.kind,
        outcome=options.outcome,
        **narrowing,
    )
    while True:
        for item in follower.poll():
            if options.json:
                print(json.dumps(item), flush=True)
            else:
                for line in item_lines(item):
                    say(line)
        if options.no_follow:
            return
        time.sleep(FOLLOW_SECONDS)


def add_parsers(actions) -> None:
    tail = actions.add_parser("tail", help="Follow an integration's logs (Ctrl-C stops).")
    tail.add_argument(
        "name", nargs="?", help="The integration (default: the manifest's in this folder)."
    )
    tail.add_argument("--installation", help="Only this installation's lines (its id).")
    tail.add_argument(
        "--since",
        help=f"From this far back: 30s, 15m, 2h, 7d or an ISO 8601 time (default: the "
        f"latest {LATEST} lines).",
    )
    tail.add_argument("--kind", choices=KINDS, help="Only calls of this kind.")
    tail.add_argument("--outcome", choices=OUTCOMES, help="Only calls with this outcome.")
    tail.add_argument("--no-follow", action="store_true", help="Print what there is and stop.")
    add_api_arguments(tail, json_help="One JSON object a line (JSON Lines).")
    tail.set_defaults(run=run_tail)
