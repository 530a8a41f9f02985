"""``python manage.py runtime_host``: start the integration runtime host with the platform's key.

It serves HTTP on ``--port`` and, when ``RUNTIME_URL`` names a frames host (``unix:///path``
or ``tcp://host:port``) or ``--socket`` / ``--frames-port`` say so, frames there too
(README, "Runtime host: transports").

The host is pure Python and knows nothing of Django; this command only hands it the
platform-to-runtime signing key (``RUNTIME_SIGNING_KEY``, or the one derived from SECRET_KEY)
and none of the platform's other settings, then replaces itself with the host.
"""

import os
import shutil
import sys
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from integrations.environment import runtime_signing_key

PASSED_THROUGH = ("PATH", "LANG", "TZ", "HOME")
#: Request threads per gunicorn process. A call waiting for a worker holds one: one integration
#: holds at most RUNTIME_WORKERS_MAX per version running and RUNTIME_MAX_QUEUED waiting (20 by
#: default), so others keep threads while it is hammered (integrations/runtime/host.py).
THREADS = 48


class Command(BaseCommand):
    help = "Start the integration runtime host (the envelope protocol's server)."

    def add_arguments(self, parser):
        default = urlsplit(settings.RUNTIME_URL.split(",")[0])
        http = default.scheme in ("http", "https")
        parser.add_argument("--host", default=default.hostname or "127.0.0.1")
        parser.add_argument("--port", type=int, default=default.port if http else 8100)
        parser.add_argument(
            "--socket",
            default=default.path if default.scheme == "unix" else None,
            help="Serve frames on this Unix socket too (RUNTIME_URL unix:///path: its path).",
        )
        parser.add_argument(
            "--frames-port",
            type=int,
            default=default.port if default.scheme == "tcp" else None,
            help="Serve frames on this TCP port too (RUNTIME_URL tcp://host:port: its port).",
        )
        parser.add_argument(
            "--gunicorn",
            type=int,
            default=0,
            metavar="PROCESSES",
            help="Serve with gunicorn (gthread) and this many processes, as in production.",
        )

    def handle(self, *args, host, port, gunicorn, socket, frames_port, **options):
        env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
        env.update(
            {name: value for name, value in os.environ.items() if name.startswith("RUNTIME_")}
        )
        env["RUNTIME_SIGNING_KEY"] = runtime_signing_key()
        env["PYTHONPATH"] = str(settings.BASE_DIR)
        if gunicorn and (socket or frames_port):
            raise CommandError("frames are served by the host's own event loop, not gunicorn")
        if gunicorn:
            executable = shutil.which("gunicorn", path=os.path.dirname(sys.executable))
            if executable is None:
                raise CommandError("gunicorn is not installed")
            command = [
                executable,
                "--bind", f"{host}:{port}",
                "--workers", str(gunicorn),
                "--worker-class", "gthread",
                "--threads", str(THREADS),
                # The platform keeps its connections to the host alive between calls: a host
                # closing them after gunicorn's default 2 idle seconds races the next call.
                "--keep-alive", "75",
                "integrations.runtime.host:create_app()",
            ]  # fmt: skip
        else:
            command = [sys.executable, "-m", "integrations.runtime.host", "--host", host]
            command += ["--port", str(port)]
            if socket:
                command += ["--socket", socket]
            if frames_port:
                command += ["--frames-port", str(frames_port)]
        sys.stdout.flush()
        os.execve(command[0], command, env)  # noqa: S606 - replaces itself with the host
