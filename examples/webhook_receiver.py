"""A webhook receiver, as the specification recommends one.

    python examples/webhook_receiver.py --port 8765 --secret whsec_...

It verifies the signature on the raw body (401 with a JSON error when invalid), acknowledges
with 200 at once, processes the event afterwards on a queue, and drops an eventId it has seen
in the last 2 minutes (deliveries can be repeated). A body that is signed but is not an event
(not a JSON object with a ``type`` and an ``eventId``) is a 400; an event whose processing
fails is reported on stderr and the receiver goes on with the next one. Only the standard
library and the receiver kit are used.
"""

import argparse
import json
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docplatform_sdk.receiver import HEADER, SignatureError, verify_signature

DEDUP_SECONDS = 120


class RecentIds:
    """eventIds seen in the last DEDUP_SECONDS, in memory."""

    def __init__(self, ttl: float = DEDUP_SECONDS):
        self.ttl = ttl
        self.seen: dict[str, float] = {}
        self.lock = threading.Lock()

    def first_time(self, event_id: str) -> bool:
        now = time.monotonic()
        with self.lock:
            self.seen = {key: at for key, at in self.seen.items() if now - at < self.ttl}
            if event_id in self.seen:
                return False
            self.seen[event_id] = now
            return True


def make_handler(secret: str, work: queue.Queue, recent: RecentIds):
    class WebhookHandler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw_body = self.rfile.read(length)
            try:
                verify_signature(raw_body, self.headers.get(HEADER), secret)
                event = json.loads(raw_body)
            except SignatureError as error:
                return self._answer(401, {"error": "invalid_signature", "detail": str(error)})
            except ValueError:
                return self._answer(400, {"error": "invalid_json"})
            problem = not_an_event(event)
            if problem:
                return self._answer(400, {"error": "invalid_event", "detail": problem})
            self._answer(200, {"received": True})
            if recent.first_time(event["eventId"]):
                work.put(event)

        def _answer(self, status: int, body: dict):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            pass

    return WebhookHandler


def not_an_event(event) -> str | None:
    """What makes a signed body unusable as an event, or None."""
    if not isinstance(event, dict):
        return "the body is not a JSON object"
    for field in ("type", "eventId"):
        if not isinstance(event.get(field), str) or not event[field]:
            return f"{field}: a non-empty string is required"
    return None


def process(event: dict) -> None:
    """Your work goes here. Events of organization scope carry no installation's space."""
    installation = event.get("installationId") or "(none)"
    print(f"{event['type']} {event['eventId']} for installation {installation}", flush=True)


def work_forever(work: queue.Queue) -> None:
    """Process events one by one; one that fails is reported and the next one goes on."""
    while True:
        event = work.get()
        try:
            process(event)
        except Exception as error:  # a receiver must outlive a bad event
            print(f"processing {event['eventId']} failed: {error!r}", file=sys.stderr, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--secret", required=True, help="The installation's signing secret.")
    args = parser.parse_args(argv)
    work: queue.Queue = queue.Queue()
    server = ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(args.secret, work, RecentIds())
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening on http://127.0.0.1:{server.server_port}/", flush=True)
    work_forever(work)


if __name__ == "__main__":
    main()
