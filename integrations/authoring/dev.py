"""``integration dev``: the author's loop against a running platform.

Publish the folder (checking first), make sure the integration is installed in the
organization, then poll: republish whenever a file of the folder changes, and print each
delivery to the installation (and to the space and site installations under it) as it
completes, with the platform's outcome or error. Requests, component renders and what the
integration's code prints are in the runtime host's log, not in the platform: with
``runtime_log`` the session follows that file and prints this integration's lines of it.
"""

import re
import signal
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.http import Http404
from django.utils import timezone

from ..environment import installation_public_endpoint
from ..models import Installation
from ..policies import effective_status
from ..selectors import deliveries_visible_to, installations_visible_to
from ..services import integration_publish
from ..services.installations import installation_create

POLL_SECONDS = 0.5
#: The runtime host's line for one call: ``runtime event=fetch integration=NAME ... outcome=ok``.
CALL_LINE = re.compile(
    r"^runtime event=\S+ integration=(?P<integration>\S+) .*outcome=(?P<outcome>\S+)"
)
#: The host asking the platform for a script it has not loaded yet: protocol, not a call.
SCRIPT_REQUIRED = "script_required"
IGNORED_FOLDERS = {"__pycache__", "node_modules"}


class FolderWatcher:
    """Notices changes under a folder by polling its files' modification times and sizes
    (hidden entries and caches left out)."""

    def __init__(self, root: Path):
        self.root = root
        self._seen = self._snapshot()

    def _snapshot(self) -> dict[Path, tuple[int, int]]:
        snapshot = {}
        for path in self.root.rglob("*"):
            relative = path.relative_to(self.root).parts
            if any(part.startswith(".") or part in IGNORED_FOLDERS for part in relative):
                continue
            try:
                stat = path.stat()
            except OSError:  # removed while walking
                continue
            if path.is_file():
                snapshot[path] = (stat.st_mtime_ns, stat.st_size)
        return snapshot

    def changed(self) -> bool:
        snapshot = self._snapshot()
        if snapshot == self._seen:
            return False
        self._seen = snapshot
        return True


class LogFollower:
    """The complete lines appended to a file since it was opened (``tail -f``)."""

    def __init__(self, path: Path):
        self._file = path.open("rb")
        self._file.seek(0, 2)
        self._partial = b""

    def new_lines(self) -> list[str]:
        if Path(self._file.name).stat().st_size < self._file.tell():  # truncated
            self._file.seek(0)
            self._partial = b""
        data = self._partial + self._file.read()
        *lines, self._partial = data.split(b"\n")
        return [line.decode(errors="replace").rstrip("\r") for line in lines]

    def close(self):
        self._file.close()


class DevSession:
    """One ``integration dev`` run: ``organization`` installs it (None: the owning one), ``say``
    prints a line for the author."""

    def __init__(
        self,
        *,
        folder: Path,
        publisher,
        organization,
        secrets_env: Callable[[], dict[str, str]],
        say: Callable[[str], None],
        runtime_log: Path | None = None,
    ):
        self.folder = folder
        self.publisher = publisher
        self.organization = organization
        self.secrets_env = secrets_env
        self.say = say
        self.watcher = FolderWatcher(folder)
        self.runtime_log = LogFollower(runtime_log) if runtime_log else None
        self.started_at: datetime = timezone.now()
        self.integration_name: str | None = None
        self.installation: Installation | None = None
        self._shown_deliveries: set[tuple[int, int]] = set()

    def run(self, stop: threading.Event) -> None:
        """Publish, then watch and print until ``stop`` is set."""
        self.publish()
        self.say(f"watching {self.folder} for changes (Ctrl-C stops)")
        while not stop.wait(POLL_SECONDS):
            if self.watcher.changed():
                self.say(f"{self.folder} changed: publishing")
                self.publish()
            self.print_runtime_lines()
            self.print_deliveries()
        if self.runtime_log is not None:
            self.runtime_log.close()

    def publish(self) -> None:
        """Check and publish the folder, then install it if it is not; problems are printed
        and the session goes on, so saving a fix publishes it."""
        try:
            result = integration_publish(
                path=self.folder, publisher=self.publisher, env=self.secrets_env()
            )
            for problem in result.warnings:
                self.say(f"warning: {problem}")
            version = result.version
            self.integration_name = version.integration.name
            if result.created:
                self.say(f"published {self.integration_name} version {version.number}")
            else:
                self.say(f"{self.integration_name} is unchanged: version {version.number}")
            if self.installation is None:
                self.install(version.integration)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                for message in messages:
                    self.say(f"{field}: {message}")
            self.say("not published: fix the problems above and save")
        except (PermissionDenied, Http404) as exc:
            self.say(f"refused: {exc}")

    def install(self, integration) -> None:
        organization = self.organization or integration.organization
        installation = (
            installations_visible_to(self.publisher)
            .filter(
                integration=integration,
                organization=organization,
                level=Installation.Level.ORGANIZATION,
            )
            .first()
        )
        if installation is None:
            installation = installation_create(
                user=self.publisher, integration=integration, organization=organization
            )
            self.say(f"installed in {organization.subdomain}: {installation.id}")
        self.installation = installation
        shown = effective_status(installation)
        self.say(f"installation {installation.id} is {shown.status}")
        for reason in shown.reasons:
            self.say(f"  {reason['path']}: {reason['message']}")
        self.say(f"public endpoint: {installation_public_endpoint(installation)}")

    def print_deliveries(self) -> None:
        """Each delivery to the installation (or one under it) completed during the session."""
        if self.installation is None:
            return
        completed = (
            deliveries_visible_to(self.publisher)
            .filter(
                Q(installation=self.installation) | Q(installation__parent=self.installation),
                completed_at__gte=self.started_at,
            )
            .select_related("event")
            .order_by("completed_at", "pk")
        )
        for delivery in completed:
            key = (delivery.pk, delivery.chain)
            if key in self._shown_deliveries:
                continue
            self._shown_deliveries.add(key)
            result = delivery.last_error or delivery.outcome
            duration = f" ({delivery.duration_ms} ms)" if delivery.duration_ms is not None else ""
            self.say(f"event {delivery.event.type} [{delivery.status}] {result}{duration}")

    def print_runtime_lines(self) -> None:
        """This integration's call lines of the host's log, and what integration code
        printed (any line that is not a call)."""
        if self.runtime_log is None:
            return
        for line in self.runtime_log.new_lines():
            call = CALL_LINE.match(line)
            if call is None or (
                call["integration"] == self.integration_name and call["outcome"] != SCRIPT_REQUIRED
            ):
                self.say(line)


def dev_run(session: DevSession) -> None:
    """Run ``session`` until SIGINT or SIGTERM."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    session.run(stop)
    session.say("stopped")
