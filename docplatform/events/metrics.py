"""The outbox's gauges, read from the database at each ``/metrics`` scrape (registered by the
docplatform app's ``ready()``; ``docplatform.observability.metrics``)."""

from django.db.models import Count, Min, Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from .models import Delivery


class OutboxCollector:
    """The outbox's backlog and the age of its oldest due delivery, by consumer, read from
    the database (one query) when scraped: whichever process wrote them."""

    def collect(self):
        now = timezone.now()
        due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
        rows = (
            Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES)
            .values("consumer")
            .annotate(
                backlog=Count("pk"),
                oldest_due=Min(Coalesce("next_attempt_at", "created_at"), filter=due),
            )
            .order_by()
        )
        backlog = GaugeMetricFamily(
            "docplatform_outbox_backlog",
            "Open deliveries (pending or retrying), by consumer.",
            labels=["consumer"],
        )
        age = GaugeMetricFamily(
            "docplatform_outbox_oldest_due_age_seconds",
            "How long the oldest due delivery has waited since it came due, by consumer "
            "(0: none due).",
            labels=["consumer"],
        )
        for row in rows:
            backlog.add_metric([row["consumer"]], row["backlog"])
            oldest = row["oldest_due"]
            age.add_metric(
                [row["consumer"]], max(0.0, (now - oldest).total_seconds()) if oldest else 0.0
            )
        yield backlog
        yield age
