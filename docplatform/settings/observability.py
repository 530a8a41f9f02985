"""Traces and metrics (README, "Traces and metrics").

**Metrics**: ``METRICS_TOKEN`` (unset: ``/metrics`` answers 404) is the bearer token a scraper
sends; ``PROMETHEUS_MULTIPROC_DIR`` (default ``<VAR_DIR>/metrics``) is the folder where every
process of this machine (web, Celery workers and their children) writes its counters, which
``/metrics`` adds up (prometheus_client's multiprocess mode). prometheus_client reads the
folder from the process environment when it is imported, so it is put there now, before
anything imports it; processes started from this one inherit it.

**Traces** (OpenTelemetry): off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set, or ``OTEL_TRACES_EXPORTER`` names ``console``;
then the standard ``OTEL_*`` variables apply as the OpenTelemetry SDK reads them, from the
process environment (not ``.env``: the SDK never reads it). ``OTEL_TRACES_EXPORTER`` takes
``otlp`` (OTLP over HTTP, protobuf), ``console`` or ``none``, comma-separated;
``OTEL_SDK_DISABLED=true`` turns tracing off whatever else is set.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from .base import VAR_DIR
from .environment import env, env_flag

METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

PROMETHEUS_MULTIPROC_DIR = Path(
    env.str("PROMETHEUS_MULTIPROC_DIR", default=str(VAR_DIR / "metrics"))
).resolve()
PROMETHEUS_MULTIPROC_DIR.mkdir(parents=True, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(PROMETHEUS_MULTIPROC_DIR)

TRACE_EXPORTERS_KNOWN = ("otlp", "console", "none")


def _trace_exporters(environ) -> tuple[str, ...]:
    """The span exporters the environment asks for: none unless an OTLP endpoint is set or
    ``OTEL_TRACES_EXPORTER`` names ``console``."""
    raw = environ.get("OTEL_TRACES_EXPORTER", "")
    named = tuple(name.strip().lower() for name in raw.split(",") if name.strip())
    for name in named:
        if name not in TRACE_EXPORTERS_KNOWN:
            raise ImproperlyConfigured(
                f"OTEL_TRACES_EXPORTER must be otlp, console or none (comma-separated), not {raw!r}"
            )
    endpoint = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    if not named:
        named = ("otlp",) if endpoint else ()
    if "console" not in named and not endpoint:
        return ()  # otlp named, but no endpoint to send to: off
    return tuple(name for name in named if name != "none")


_otel_disabled = env_flag("OTEL_SDK_DISABLED", default=False)
#: The span exporters this process uses ((): tracing off).
OTEL_TRACES_EXPORTERS = () if _otel_disabled else _trace_exporters(os.environ)
