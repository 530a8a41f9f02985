"""Serve this machine's metrics, for a machine that runs workers but no web server."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ...observability.machine_server import metrics_server


class Command(BaseCommand):
    help = (
        "Serve the counters of this machine's processes (Celery workers and their children) "
        "at GET /metrics, for the holder of METRICS_TOKEN, on a machine without a web server."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--bind", default="127.0.0.1", help="Address to listen on (0.0.0.0: every one)."
        )
        parser.add_argument("--port", type=int, default=9108, help="Port (0: any free one).")

    def handle(self, *args, bind, port, **options):
        if not 0 <= port <= 65535:
            raise CommandError(f"--port: {port} is not a port (0 to 65535)")
        try:
            server = metrics_server(bind, port)
        except OSError as exc:
            raise CommandError(f"--bind/--port: cannot listen on {bind}:{port} ({exc})") from exc
        host, port = server.server_address[:2]
        unset = "" if settings.METRICS_TOKEN else " (METRICS_TOKEN unset: every request gets 404)"
        self.stdout.write(f"this machine's metrics at http://{host}:{port}/metrics{unset}")
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
