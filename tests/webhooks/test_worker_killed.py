"""A worker killed mid-flight loses nothing: the delivery's lease runs out and the sweeper
brings it back to another worker (real worker processes, killed with SIGKILL)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from docplatform.events.models import Delivery
from docplatform.events.outbox import deliveries_sweep
from docplatform.revisions import space_content_update

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 3


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "docplatform", "worker", "-Q", "webhooks",
         "--pool", "solo", "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.slow
def test_a_delivery_survives_a_worker_killed_mid_flight(
    transactional_db, receiver, install_webhook, space, webhook_settings, private_broker
):
    webhook_settings.DELIVERY_LEASE_SECONDS = LEASE_SECONDS
    webhook_settings.DELIVERY_SWEEP_GRACE_SECONDS = 1
    receiver.respond((200, {}, b"", 30.0), 200)  # the first attempt hangs: the worker dies
    install_webhook(space=space, url=receiver.url)

    env = {
        **os.environ,
        **private_broker.env,
        "DJANGO_SETTINGS_MODULE": "docplatform.settings",
        "DATABASE_URL": database_url(),
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        "DELIVERY_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    first = start_worker(env)
    second = None
    try:
        space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
        receiver.wait_for(1, timeout=30)
        os.killpg(first.pid, signal.SIGKILL)  # killed while waiting for the response
        first.wait(timeout=10)
        delivery = Delivery.objects.get(consumer="webhook")
        assert delivery.status == "pending" and delivery.lease_expires_at is not None

        second = start_worker(env)
        started = time.monotonic()
        while Delivery.objects.get(pk=delivery.pk).status != "succeeded":
            assert time.monotonic() - started < 60, "not recovered within a minute"
            deliveries_sweep()  # what beat runs every few seconds
            time.sleep(0.5)
    finally:
        stop(first)
        if second is not None:
            stop(second)

    first_try, recovered = receiver.requests
    assert recovered.body == first_try.body
    assert recovered.headers["X-Service-Delivery"] == first_try.headers["X-Service-Delivery"]
    assert Delivery.objects.get(pk=delivery.pk).attempts == 1
