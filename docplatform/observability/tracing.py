"""Traces: OpenTelemetry, off unless the environment configures an exporter (settings,
``observability``), with the Django, Celery, requests and psycopg instrumentations.

One trace follows an event from the request that fired it to each POST that delivers it:
``fire`` stores the request's trace context with the event (``Event.traceparent``), and the
consumer's attempt continues it (``span(..., parent=event.traceparent)``) in whatever
worker, drain and thread takes the delivery, however late (a retry, the sweeper). The
runtime gateway's calls carry it to the runtime host (``traceparent`` header), which
continues it when it traces too.

Everything here is a no-op while tracing is off: ``span`` yields a span that records
nothing and carries no header, ``traceparent_now`` is "".
"""

import logging
import os
import threading
from contextlib import contextmanager

from django.conf import settings

logger = logging.getLogger(__name__)

SERVICE_NAME = "docplatform"
#: The trace context headers sent on (W3C Trace Context); never the baggage.
TRACE_HEADERS = ("traceparent", "tracestate")

_lock = threading.Lock()
_state: dict = {"on": False, "processors": []}


def tracing_on() -> bool:
    return _state["on"]


def tracing_start(processors=None) -> bool:
    """Turn tracing on in this process: the span processors (default: those of the exporters
    the settings name, ``OTEL_TRACES_EXPORTERS``; none: stay off) and the instrumentations.
    Called by the docplatform app's ``ready()`` (every web, worker and command process).
    Returns whether tracing is on."""
    with _lock:
        if _state["on"]:
            return True
        if processors is None:
            processors = _processors(settings.OTEL_TRACES_EXPORTERS)
        if not processors:
            return False
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):  # set once per process (the SDK's rule)
            named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
            provider = TracerProvider(resource=Resource.create(named))
            trace.set_tracer_provider(provider)
        for processor in processors:
            provider.add_span_processor(processor)
        _state["processors"] = list(processors)
        _instrument(True)
        _state["on"] = True
        return True


def tracing_stop() -> None:
    """Turn tracing off again (the tests): the instrumentations removed, this start's span
    processors shut down (a tracer provider stays set: the SDK sets one per process)."""
    with _lock:
        if not _state["on"]:
            return
        _instrument(False)
        for processor in _state["processors"]:
            processor.shutdown()
        _state.update(on=False, processors=[])


def _processors(exporters: tuple[str, ...]) -> list:
    """A processor per exporter: the console prints each span as it ends; OTLP (HTTP) sends
    them in batches from a thread (the SDK restarts it in a forked child)."""
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    processors = []
    for name in exporters:
        if name == "console":
            processors.append(SimpleSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            processors.append(BatchSpanProcessor(OTLPSpanExporter()))
    return processors


def _instrumentors() -> list:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    return [
        DjangoInstrumentor(),
        CeleryInstrumentor(),
        RequestsInstrumentor(),
        PsycopgInstrumentor(),
    ]


def _instrument(on: bool) -> None:
    for instrumentor in _instrumentors():
        if on and not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()
        elif not on and instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()


# --- carrying a trace ---------------------------------------------------------------------


def traceparent_now() -> str:
    """The current span's W3C ``traceparent`` ("" with tracing off or no span): what an event
    stores so its deliveries continue the trace of what fired it."""
    return trace_headers_now().get("traceparent", "")


def context_now():
    """The current trace context (None with tracing off), for work handed to another thread."""
    if not _state["on"]:
        return None
    from opentelemetry import context

    return context.get_current()


def trace_headers_now() -> dict[str, str]:
    """The trace context headers of the current span ({} with tracing off or no span)."""
    if not _state["on"]:
        return {}
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return {name: value for name, value in carrier.items() if name in TRACE_HEADERS}


class Span:
    """A span being recorded (or, tracing off, a stand-in recording nothing)."""

    def __init__(self, span=None):
        self._span = span

    def headers(self) -> dict[str, str]:
        """The headers that carry this span's context to another process ({}: off)."""
        return trace_headers_now() if self._span is not None else {}

    def set(self, name: str, value) -> None:
        if self._span is not None and value is not None:
            self._span.set_attribute(name, value)

    def failed(self, description: str) -> None:
        if self._span is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, description[:200]))


@contextmanager
def span(name: str, *, parent=None, kind: str = "internal", attributes: dict | None = None):
    """A span named ``name``, current in this thread while the block runs, child of
    ``parent``: a stored ``traceparent`` string, a context from ``context_now()``, or None
    (the current span, if any). ``kind``: ``internal``, ``client``, ``server``, ``consumer``.
    Yields a ``Span``; tracing off, it records nothing."""
    if not _state["on"]:
        yield Span()
        return
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if isinstance(parent, str):
        parent = (
            TraceContextTextMapPropagator().extract({"traceparent": parent}) if parent else None
        )
    tracer = trace.get_tracer("docplatform")
    with tracer.start_as_current_span(
        name, context=parent, kind=getattr(SpanKind, kind.upper()), attributes=attributes
    ) as recorded:
        yield Span(recorded)
