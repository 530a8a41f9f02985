"""``python manage.py runtime_host``: start the integration runtime host with the platform's key.

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
        parser.add_argument("--host", default=default.hostname or "127.0.0.1")
        parser.add_argument("--port", type=int, default=default.port or 8100)
        parser.add_argument(
            "--gunicorn",
            type=int,
            default=0,
            metavar="PROCESSES",
            help="Serve with gunicorn (gthread) and this many processes, as in production.",
        )

    def handle(self, *args, host, port, gunicorn, **options):
        env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
        env.update(
            {name: value for name, value in os.environ.items() if name.startswith("RUNTIME_")}
        )
        env["RUNTIME_SIGNING_KEY"] = runtime_signing_key()
        env["PYTHONPATH"] = str(settings.BASE_DIR)
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
        sys.stdout.flush()
        os.execve(command[0], command, env)  # noqa: S606 - replaces itself with the host
