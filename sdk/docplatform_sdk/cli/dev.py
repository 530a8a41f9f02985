"""``dev``: the author's loop against a running platform, over its API.

Publish the folder (checked here first) as a development version, install it in the
organization (or ``--space``) unless it is installed there already, mark that installation
as development, then republish on every save (the folder is polled every ``WATCH_SECONDS``)
and show this integration's logs as they arrive: each call, what the code printed, its
error. Development versions run only for development installations; every other one keeps
the released version (``publish`` releases). An invalid save prints its problems and the
session goes on; Ctrl-C (or SIGTERM) ends it with exit 0.
"""

import time
from pathlib import Path

from ..authoring.watch import FolderWatcher
from .api import ApiRefused, Platform
from .errors import Refused, UsageError
from .folder import add_path_arguments, existing_path, secrets_environment
from .installing import (
    add_set_argument,
    install,
    installation_lines,
    organization_installation,
    space_installation,
)
from .logs import LogFollower, item_lines
from .output import say
from .publishing import DEVELOPMENT, publish_folder
from .session import add_api_arguments, platform_for
from .trigger import ready_command, trigger_types

WATCH_SECONDS = 0.2
LOG_SECONDS = 0.5


class DevSession:
    """One ``dev`` run: ``space`` or else ``organization`` installs it (None: the owning
    organization)."""

    def __init__(
        self,
        platform: Platform,
        folder: Path,
        *,
        env_file: str | None = None,
        organization: str | None = None,
        space: str | None = None,
        values: list[str] = (),
        shown_path: str = ".",
    ):
        self.platform = platform
        self.folder = folder
        self.shown_path = shown_path  # the folder as the author typed it
        self.env_file = env_file
        self.organization = organization
        self.space = space
        self.values = list(values)  # --set KEY=VALUE, for the installation dev makes
        self.watcher = FolderWatcher(folder)
        self.name: str | None = None
        self.installation: dict | None = None
        self.logs: LogFollower | None = None

    def publish(self) -> None:
        """Check and publish the folder, then install it if it is not; a refusal is printed
        and the session goes on, so saving a fix publishes it."""
        try:
            body = publish_folder(
                self.platform,
                self.folder,
                secrets_environment(self.env_file),
                channel=DEVELOPMENT,
            )
        except (Refused, UsageError) as exc:
            say(f"not published: {exc}; fix it and save", "error")
            return
        if self.name != body["integration"]:
            self.name = body["integration"]
            self.installation = None
            started = self.platform.server_time.isoformat()
            self.logs = LogFollower(self.platform, f"integrations/{self.name}/logs/", since=started)
        if self.installation is None:
            try:
                self.install()
            except Refused as exc:
                say(f"not installed: {exc}; tried again at the next save", "error")

    def install(self) -> None:
        """Find or make the installation dev runs, and mark it as development."""
        installation, where = self.installed()
        if installation is None:
            installation = install(
                self.platform,
                self.name,
                organization=None if self.space else where,
                space=self.space,
                items=self.values,
            )
            say(f"installed in {where}: {installation['id']}", "ok")
        self.installation = installation
        first, *reasons = installation_lines(installation)
        say(f"installation {first.replace(' ', ' is ', 1)}")
        for line in reasons:
            say(line)
        self.mark_development()
        say(f"public endpoint: {self.installation['publicEndpoint']}")
        self.suggest_trigger()

    def suggest_trigger(self) -> None:
        """Print a ready ``trigger`` command for an event the installation receives."""
        try:
            types = trigger_types(self.platform, self.installation["id"])
        except Refused as exc:
            say(f"no event types: {exc}", "error")
            return
        command = ready_command(types, self.shown_path, self.space)
        if command is None:
            say("no platform event reaches it: its scopes allow none (see the manifest's scopes)")
        else:
            say(f"send it an event: {command}")

    def mark_development(self) -> None:
        """Development versions run for the installation dev uses (not for the others)."""
        installation = self.installation
        if not installation["development"]:
            try:
                self.platform.call(
                    "POST",
                    f"installations/{installation['id']}/development/",
                    action="marking it as development",
                    json={"development": True},
                )
            except Refused as exc:
                say(f"{exc}: installation {installation['id']} runs the released version")
                return
        say(f"installation {installation['id']} runs development versions")

    def installed(self) -> tuple[dict | None, str]:
        """The installation of this integration in the space or organization dev installs
        into (None: not installed), and where that is as the author reads it."""
        if self.space:
            found = space_installation(self.platform, self.name, self.space, action="dev")
            return found, f"space {self.space}"
        return organization_installation(self.platform, self.name, self.organization, action="dev")

    def show_logs(self) -> None:
        if self.logs is None:
            return
        try:
            items = self.logs.poll()
        except ApiRefused as exc:
            say(f"no logs: {exc}", "error")
            self.logs = None
            return
        for item in items:
            for line in item_lines(item, installation=False):
                say(line)

    def run(self) -> None:
        self.publish()
        say(f"watching {self.folder} for changes (Ctrl-C stops)")
        next_logs = 0.0
        while True:
            time.sleep(WATCH_SECONDS)
            if self.watcher.changed():
                say(f"{self.folder} changed: publishing")
                self.publish()
            if time.monotonic() >= next_logs:
                self.show_logs()
                next_logs = time.monotonic() + LOG_SECONDS


def run_dev(options) -> None:
    folder = existing_path(options.path)
    if not folder.is_dir():
        raise UsageError(f"{options.path}: dev takes an integration folder")
    secrets_environment(options.env_file)  # a missing env file is a usage error at once
    session = DevSession(
        platform_for(options),
        folder,
        env_file=options.env_file,
        organization=options.organization,
        space=options.space,
        values=options.values,
        shown_path=options.path,
    )
    try:
        session.run()
    except KeyboardInterrupt:
        say("stopped")


def add_parsers(actions) -> None:
    dev = actions.add_parser(
        "dev",
        help="Publish, install, republish on every save and show the logs (Ctrl-C stops).",
    )
    add_path_arguments(dev)
    where = dev.add_mutually_exclusive_group()
    where.add_argument(
        "--organization",
        help="Install into this organization (id or subdomain; default: the owning one).",
    )
    where.add_argument(
        "--space", help="Install into this space (id) and run development versions there only."
    )
    add_set_argument(dev)  # for the installation dev makes, when it makes one
    add_api_arguments(dev)
    dev.set_defaults(run=run_dev)
