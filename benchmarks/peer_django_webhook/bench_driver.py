"""The peer's side of the webhook delivery benchmark, run with the peer's own Python.

    python bench_driver.py setup --url URL --secret SECRET
        one django-webhook Webhook on the topic ``bench.ContentUpdate/create``, with its secret
    python bench_driver.py fire --count N [--rate R] [--producers P] --out FILE
        saves N ContentUpdate rows (each save fires the webhook through Celery) and writes
        ``{"committed": {event_id: commit time}, "seconds": firing time, "cpu": seconds}``

The benchmark (``../webhook_delivery.py``) sets the environment: PEER_DATABASE_URL and
CELERY_BROKER_URL.
"""

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peer_project.settings")

import django

django.setup()

from bench.models import COMMITTED, ContentUpdate
from django.db import connection
from django_webhook.models import Webhook, WebhookSecret, WebhookTopic
from firing import fire_schedule

TOPIC = "bench.ContentUpdate/create"


def setup(url: str, secret: str) -> None:
    webhook = Webhook.objects.create(url=url)
    webhook.topics.add(WebhookTopic.objects.get(name=TOPIC))
    WebhookSecret.objects.create(webhook=webhook, token=secret)


def fire(count: int, rate: float, producers: int, space_id: str, revision_id: str) -> dict:
    def fire_one(_):
        ContentUpdate.objects.create(
            event_id=uuid.uuid4(), space_id=space_id, revision_id=revision_id
        )

    COMMITTED.clear()
    cpu = time.process_time()
    seconds = fire_schedule(
        fire_one,
        count=count,
        rate=rate,
        producers=producers,
        on_thread_exit=connection.close,
    )
    return {
        "committed": dict(COMMITTED),
        "seconds": seconds,
        "cpu": time.process_time() - cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="the peer's side of the webhook benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
    setup_parser = commands.add_parser("setup")
    setup_parser.add_argument("--url", required=True)
    setup_parser.add_argument("--secret", required=True)
    fire_parser = commands.add_parser("fire")
    fire_parser.add_argument("--count", type=int, required=True)
    fire_parser.add_argument("--rate", type=float, default=0.0)
    fire_parser.add_argument("--producers", type=int, default=1)
    fire_parser.add_argument("--space-id", default="s" * 32)
    fire_parser.add_argument("--revision-id", default="r" * 20)
    fire_parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.command == "setup":
        setup(args.url, args.secret)
    else:
        result = fire(args.count, args.rate, args.producers, args.space_id, args.revision_id)
        Path(args.out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
