"""The runtime gateway carries the event's trace to the runtime host (``traceparent``), and a
host that traces (here ``OTEL_TRACES_EXPORTER=console``, printing its spans to its log)
continues it: the fired event, the worker's delivery, the gateway's call and the host's
request in one trace."""

import json
import re
import textwrap

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from docplatform.events.models import Delivery
from docplatform.observability.tracing import span, tracing_start, tracing_stop
from docplatform.revisions import space_content_update
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("celery_worker")]

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import create_integration

    def on_content_updated(event, context):
        pass

    integration = create_integration(events={"space_content_updated": on_content_updated})
    """
)


@pytest.fixture(scope="module")
def tracing_host(tmp_path_factory):
    """A runtime host of its own whose spans go to its log (the console exporter)."""
    from integrations.environment import runtime_signing_key
    from tests.integrations.runtime.support import RunningHost

    host = RunningHost(
        runtime_signing_key(),
        tmp_path_factory.mktemp("traced-runtime") / "host.log",
        RUNTIME_CALL_TIMEOUT="3",
        RUNTIME_WORKERS_PER_VERSION="1",
        OTEL_TRACES_EXPORTER="console",
        OTEL_SERVICE_NAME="runtime-under-test",
    )
    yield host
    host.stop()


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    assert tracing_start([SimpleSpanProcessor(exporter)])
    yield exporter
    tracing_stop()


def host_spans(log: str) -> list[dict]:
    """The spans the host printed (the console exporter's indented JSON objects)."""
    found = []
    for block in re.findall(r"^\{\n.*?^\}$", log, flags=re.MULTILINE | re.DOTALL):
        try:
            found.append(json.loads(block))
        except ValueError:
            continue
    return found


def test_an_events_trace_reaches_the_runtime_host(
    spans, tracing_host, settings, origins, publish, write_integration, org_admin, organization
):
    settings.RUNTIME_URL = tracing_host.frames_url
    root = write_integration(
        minimal_manifest(name="traced", script="main.py", scopes=["space:content:read"]),
        files={"main.py": SCRIPT},
        folder="traced",
    )
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    space = SpaceFactory(organization=organization)
    installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )

    with span("the test's request") as fired:
        space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    trace_id = fired._span.context.trace_id
    delivery = Delivery.objects.get(event__type="space_content_updated", installation__space=space)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded", timeout=30)

    # The gateway's call (two when the host asks for the code first: 409 bundle_required),
    # a child of the worker's delivery span, itself continuing the trace the event stored.
    calls = [
        recorded
        for recorded in spans.get_finished_spans()
        if recorded.name == "runtime call" and recorded.context.trace_id == trace_id
    ]
    assert [call.attributes["http.response.status_code"] for call in calls][-1] == 200
    assert {call.attributes["docplatform.runtime.kind"] for call in calls} == {"event"}
    (delivered,) = [
        recorded
        for recorded in spans.get_finished_spans()
        if recorded.name == "runtime delivery" and recorded.context.trace_id == trace_id
    ]
    assert delivered.parent.span_id == fired._span.context.span_id
    assert {call.parent.span_id for call in calls} == {delivered.context.span_id}
    # The host's span of each call: the same trace, the gateway's call its parent.
    wait_until(lambda: len(served_in(tracing_host.log(), trace_id)) == len(calls), timeout=10)
    served = served_in(tracing_host.log(), trace_id)
    assert sorted(printed["parent_id"] for printed in served) == sorted(
        f"0x{call.context.span_id:016x}" for call in calls
    )
    assert "ok" in {printed["attributes"]["docplatform.runtime.outcome"] for printed in served}
    assert {printed["kind"] for printed in served} == {"SpanKind.SERVER"}
    assert {printed["resource"]["attributes"]["service.name"] for printed in served} == {
        "runtime-under-test"
    }


def served_in(log: str, trace_id: int) -> list[dict]:
    return [
        printed
        for printed in host_spans(log)
        if printed["context"]["trace_id"] == f"0x{trace_id:032x}"
    ]
