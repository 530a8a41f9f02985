"""Traces and metrics (README, "Traces and metrics"): ``tracing`` (OpenTelemetry, off unless
configured), ``metrics`` (Prometheus counters shared by every process of a machine, and the
gauges read from the database at each scrape), ``views`` (``/metrics``)."""
