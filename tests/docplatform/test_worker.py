"""A real Celery worker, on the configured broker (Redis in CI, the file system by default)."""

from django.core.management import call_command

from docplatform.celery import app
from docplatform.models import WorkerPing


def test_a_real_worker_answers_a_ping_through_the_broker(celery_worker, capsys):
    call_command("worker_ping", timeout=20)
    ping = WorkerPing.objects.get()
    assert ping.answered_at is not None
    assert ping.worker
    assert "answered in" in capsys.readouterr().out


def test_tasks_are_acknowledged_late_and_routed_to_their_queues():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.amqp.router.route({}, "webhooks.tasks.deliver")["queue"].name == "webhooks"
    assert app.amqp.router.route({}, "integrations.tasks.run_delivery")["queue"].name == "runtime"
    assert app.amqp.router.route({}, "integrations.tasks.sweep_deliveries")["queue"].name == (
        "default"
    )
    assert app.amqp.router.route({}, "docplatform.tasks.answer_worker_ping")["queue"].name == (
        "default"
    )
