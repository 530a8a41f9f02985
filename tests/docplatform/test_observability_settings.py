"""Tracing is off unless an OTLP endpoint is set or the console exporter is named; a wrong
exporter name stops start-up naming the variable."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from docplatform.settings.observability import _trace_exporters


@pytest.mark.parametrize(
    ("environ", "exporters"),
    [
        ({}, ()),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, ()),  # nowhere to send: off
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ("otlp",)),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                "OTEL_TRACES_EXPORTER": "otlp,console",
            },
            ("otlp", "console"),
        ),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, ()),
    ],
)
def test_tracing_is_off_unless_configured(environ, exporters):
    assert _trace_exporters(environ) == exporters


def test_an_unknown_exporter_is_refused():
    with pytest.raises(ImproperlyConfigured, match="OTEL_TRACES_EXPORTER must be otlp"):
        _trace_exporters({"OTEL_TRACES_EXPORTER": "zipkin"})
