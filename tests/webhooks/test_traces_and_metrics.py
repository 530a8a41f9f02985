"""Traces and metrics (README, "Traces and metrics"): one trace from the API request that
fires an event to the receiver's ``traceparent``, and ``/metrics`` counting deliveries of
every process. A real Celery worker, a real local receiver, the OpenTelemetry SDK's in-memory
exporter."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families

from docplatform.observability.tracing import tracing_start, tracing_stop
from tests.api_helpers import API, api_client
from tests.conftest import wait_until
from tests.factories import SpaceFactory

pytestmark = pytest.mark.usefixtures("webhook_settings", "celery_worker")

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def spans():
    """Tracing on in this process for the test, its spans kept in memory."""
    exporter = InMemorySpanExporter()
    assert tracing_start([SimpleSpanProcessor(exporter)])
    yield exporter
    tracing_stop()


def header(received, name: str) -> str | None:
    return {key.lower(): value for key, value in received.headers.items()}.get(name)


@pytest.mark.slow
def test_one_trace_from_the_api_request_to_the_receivers_traceparent(
    spans, receiver, install_webhook, space, org_admin, organization
):
    install_webhook(space=space, url=receiver.url, traceparent=True)
    # Another endpoint that did not ask for the trace context gets none.
    other = SpaceFactory(organization=organization)
    install_webhook(space=other, url=receiver.url_for("/plain"))

    api = api_client(org_admin)
    for target in (space, other):
        response = api.post(
            f"{API}/spaces/{target.id}/revisions/",
            {"message": "traced", "pages": [{"path": "a", "title": "A"}]},
        )
        assert response.status_code == 201, response.content
    receiver.wait_for(2)
    (traced,) = receiver.to("/hooks")
    (plain,) = receiver.to("/plain")
    assert header(plain, "traceparent") is None

    version, trace_id, parent_id, flags = header(traced, "traceparent").split("-")
    assert version == "00" and int(flags, 16) & 1  # sampled
    finished = spans.get_finished_spans()
    (request,) = [
        span
        for span in finished
        if span.kind == SpanKind.SERVER
        and span.attributes.get("http.route", "").endswith("revisions/")
        and span.context.trace_id == int(trace_id, 16)
    ]
    # The POST is a span of the request's trace, and the receiver's parent is that span.
    wait_until(lambda: any(s.name == "webhook POST" for s in spans.get_finished_spans()))
    (post,) = [
        span
        for span in spans.get_finished_spans()
        if span.name == "webhook POST" and span.context.trace_id == request.context.trace_id
    ]
    assert f"{post.context.span_id:016x}" == parent_id
    assert post.kind == SpanKind.CLIENT
    assert post.attributes["http.response.status_code"] == 200


def scrape(token: str | None = TOKEN, **headers):
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return Client().get("/metrics", **headers)


def samples(response) -> dict:
    assert response.status_code == 200, response.status_code
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_answer_only_the_token(settings):
    settings.METRICS_TOKEN = ""
    assert scrape().status_code == 404
    assert scrape(None).status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert scrape(None).status_code == 404
    assert scrape("not-the-token").status_code == 404
    assert scrape(None, HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 404
    response = scrape()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")


def test_metrics_count_deliveries_of_every_process(settings, receiver, install_webhook, space):
    settings.METRICS_TOKEN = TOKEN
    install_webhook(space=space, url=receiver.url)
    before = samples(scrape())

    api = api_client(space.organization.memberships.get(role="admin").user)
    response = api.post(
        f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "a", "title": "A"}]}
    )
    assert response.status_code == 201
    receiver.wait_for(1)
    succeeded = "docplatform_deliveries_total"

    def counted():
        now = samples(scrape())
        moved = value(now, succeeded, consumer="webhook", outcome="succeeded")
        return moved == value(before, succeeded, consumer="webhook", outcome="succeeded") + 1

    wait_until(counted)
    after = samples(scrape())
    attempts = "docplatform_delivery_attempt_seconds_count"
    assert (
        value(after, attempts, consumer="webhook")
        == value(before, attempts, consumer="webhook") + 1
    )
    # The outbox's gauges are read from the database at the scrape: nothing is left open.
    assert value(after, "docplatform_outbox_backlog", consumer="webhook") == 0

    # Another process (a Celery worker child, say) counts into the same folder; once it has
    # exited, its counts stay, added into the archive, and its own file is gone.
    folder = Path(django_settings.PROMETHEUS_MULTIPROC_DIR)
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; from docplatform.observability.metrics import deliveries_settled;"
            "deliveries_settled('webhook', 'failed', 3); print(os.getpid())",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    pid = int(child.stdout)
    assert (folder / f"counter_{pid}.db").exists()
    failed = value(after, succeeded, consumer="webhook", outcome="failed")
    final = samples(scrape())
    assert value(final, succeeded, consumer="webhook", outcome="failed") == failed + 3
    assert not (folder / f"counter_{pid}.db").exists()
    assert (folder / "counter_archive.db").exists()
    assert samples(scrape()) == final  # archived once, not again
