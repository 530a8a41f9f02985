"""The runtime hosts' workers per pool, on the platform's ``/metrics``: at each scrape, each
host of ``RUNTIME_URL`` is asked ``GET /health`` (over HTTP or in frames; it lists its pools'
workers) within ``HEALTH_TIMEOUT``; a host that does not answer is
``docplatform_runtime_host_up 0`` and reports no pools. Registered by the integrations
app's ``ready()``."""

import json

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily

from . import hosts

#: Seconds a scrape waits for each runtime host's health.
HEALTH_TIMEOUT = 1.0


def _health(host: str) -> dict | None:
    answered = hosts.health(host, HEALTH_TIMEOUT)
    if answered is None or answered[0] != 200:
        return None
    try:
        answer = json.loads(answered[1])
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


class RuntimeWorkersCollector:
    def collect(self):
        up = GaugeMetricFamily(
            "docplatform_runtime_host_up",
            "Whether the runtime host answered its health check at this scrape.",
            labels=["host"],
        )
        workers = GaugeMetricFamily(
            "docplatform_runtime_workers",
            "Workers (alive or starting) of each pool of a runtime host: one pool per "
            "integration code (bundle).",
            labels=["host", "integration", "bundle"],
        )
        busy = GaugeMetricFamily(
            "docplatform_runtime_workers_busy",
            "Workers of each pool running a call now.",
            labels=["host", "integration", "bundle"],
        )
        spares = GaugeMetricFamily(
            "docplatform_runtime_spare_workers",
            "Workers started ahead, not yet given to a pool.",
            labels=["host"],
        )
        for host in hosts.host_urls(settings.RUNTIME_URL):
            health = _health(host)
            up.add_metric([host], 1 if health else 0)
            listed = (health or {}).get("workers")
            if not isinstance(listed, dict):
                continue
            for pool in listed.get("pools") or []:
                labels = [host, str(pool.get("integration")), str(pool.get("bundle"))]
                workers.add_metric(labels, pool.get("workers") or 0)
                busy.add_metric(labels, pool.get("busy") or 0)
            spares.add_metric([host], listed.get("spares") or 0)
        yield from (up, workers, busy, spares)
