"""``docplatform-integration`` as an author runs it: the installed console script in a
process of its own, with no platform settings, a config folder of its own and a live
server's API."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = Path(sys.executable).with_name("docplatform-integration")
NO_PLATFORM = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DOCPLATFORM_API", "DOCPLATFORM_TOKEN")


#: Runs the command after it (``os.execv``) with SIGINT at its default, as on a terminal: a
#: test run started as a background job ignores SIGINT, and a child inherits that, so
#: ``Running.stop``'s Ctrl-C would not reach it.
WITH_CTRL_C = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def author_env(home: Path, **extra: str) -> dict[str, str]:
    """An author's shell: no platform settings, ``home`` as home and config folder."""
    env = {name: value for name, value in os.environ.items() if name not in NO_PLATFORM}
    env.pop("NO_COLOR", None)
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **extra}


class Author:
    """One author's machine: their home (and saved login) and their console script."""

    def __init__(self, home: Path, cwd: Path | None = None):
        self.home = home
        self.cwd = cwd or home
        home.mkdir(parents=True, exist_ok=True)

    @property
    def config_file(self) -> Path:
        return self.home / ".config" / "docplatform" / "config.json"

    def run(self, *args: str, stdin: str | None = None, **env: str):
        return subprocess.run(
            [str(CONSOLE_SCRIPT), *args],
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            cwd=self.cwd,
            env=author_env(self.home, **env),
            timeout=120,
        )

    def start(self, *args: str, **env: str) -> "Running":
        command = [*WITH_CTRL_C, str(CONSOLE_SCRIPT), *args]
        return Running(command, cwd=self.cwd, env=author_env(self.home, **env))


class Running:
    """A long-running command (``dev``, ``tail``); its output read line by line."""

    def __init__(self, command: list[str], *, cwd: Path, env: dict[str, str]):
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 30) -> re.Match:
        """The first line from here on matching ``pattern``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            self.seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        raise AssertionError(
            f"no line matching {pattern!r}; output so far:\n" + "\n".join(self.seen)
        )

    def stop(self, signum=signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
