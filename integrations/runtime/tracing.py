"""The runtime host's traces (OpenTelemetry, no Django): off unless the host's environment
configures an exporter, as the platform's are (``OTEL_EXPORTER_OTLP_ENDPOINT``, or
``OTEL_TRACES_EXPORTER`` naming ``console``; ``OTEL_SDK_DISABLED=true``: off). Then each
request the host serves is a server span that continues the trace of the gateway's call
(its ``traceparent`` header): the platform's request, the event's delivery, the host's
work in one trace. The service name is ``docplatform-runtime`` unless
``OTEL_SERVICE_NAME`` says otherwise.
"""

import logging
import os
from contextlib import contextmanager

logger = logging.getLogger("integrations.runtime")

SERVICE_NAME = "docplatform-runtime"
_state = {"on": False}


def exporters_named(environ) -> tuple[str, ...]:
    """The span exporters ``environ`` asks for (``otlp``, ``console``); () while off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() in ("true", "1", "yes", "on"):
        return ()
    raw = environ.get("OTEL_TRACES_EXPORTER", "")
    named = tuple(name.strip().lower() for name in raw.split(",") if name.strip())
    endpoint = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    if not named:
        named = ("otlp",) if endpoint else ()
    if "console" not in named and not endpoint:
        return ()
    return tuple(name for name in named if name in ("otlp", "console"))


def tracing_start(environ=os.environ) -> bool:
    """Turn the host's tracing on when its environment says so; whether it is on."""
    exporters = exporters_named(environ)
    if not exporters or _state["on"]:
        return _state["on"]
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    named = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(named))
    for name in exporters:
        if name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _state["on"] = True
    logger.info("traces: on (%s)", ", ".join(exporters))
    return True


def is_on() -> bool:
    return _state["on"]


@contextmanager
def server_span(method: str, path: str, carrier: dict):
    """The span of one request the host serves, continuing the caller's trace from its
    ``traceparent`` (``carrier``: the trace context's headers, by lower-case name); nothing
    while tracing is off."""
    if not _state["on"]:
        yield None
        return
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = TraceContextTextMapPropagator().extract(carrier)
    tracer = trace.get_tracer("docplatform.runtime")
    with tracer.start_as_current_span(
        f"{method} {path}",
        context=parent,
        kind=SpanKind.SERVER,
        attributes={"http.request.method": method, "url.path": path},
    ) as span:
        yield span
