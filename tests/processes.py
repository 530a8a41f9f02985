"""The platform's command lines run as people run them: in a process of their own.

The process reads ``tests.settings`` and the test database (a file on SQLite), so a test that
uses these needs a database its own process has committed to: ``transactional_db``.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.db import connection

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def database_url() -> str:
    """The test database, for a process of its own."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db["HOST"] or "127.0.0.1"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def platform_env(**environment: str) -> dict[str, str]:
    """The test run's environment, its settings and its database, and ``environment``."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        # The repository's platform and its SDK (not another checkout's installed one).
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "sdk")]),
        "RUNTIME_URL": settings.RUNTIME_URL,  # publish loads the code there to check it
        **environment,
    }


def run(
    command: list[str], env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, capture_output=True, text=True, cwd=REPO, env=env, timeout=timeout
    )


def manage_py(*args: str, timeout: float = 60, **environment: str) -> subprocess.CompletedProcess:
    """``python manage.py ARGS`` against the test database."""
    command = [sys.executable, str(REPO / "manage.py"), *args]
    return run(command, platform_env(**environment), timeout)


def start(command: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """``command`` in a session of its own (``stop`` ends it and all it started), its output
    in ``log_path``."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process's session, SIGKILL after 10 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
