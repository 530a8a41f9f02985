"""The outbox's rows: events, their deliveries and the drain requests of batch consumers.

Registered with the ``docplatform`` app (``docplatform.models`` imports them). The tables were
``integrations_delivery`` and ``integrations_drainrequest`` until the outbox moved into the
host (docplatform migration 0003 and its neighbours keep every row).

**Decision: a delivery's recipient is an installation, named by a string foreign key**
(``"integrations.Installation"``), not a generic ``recipient_id``. A string reference is not
an import: the host imports no plug-in app (the import contract holds), and the foreign key
keeps what a generic column would lose: deleting an installation deletes its deliveries, the
delivery logs join installations and their organizations in one query, and the database
refuses a delivery to nobody. The price is a migration dependency of ``docplatform`` on
``integrations``: the host's outbox runs with the integrations app installed, which is the
only way the platform is deployed. Should a recipient other than an installation ever
appear, the column becomes ``recipient_id`` plus the consumer name.
"""

from django.db import models

from ..ids import new_id


class Event(models.Model):
    """Something that happened on the platform, as fired to installations (the outbox)."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    type = models.CharField(max_length=64, db_index=True)
    organization = models.ForeignKey(
        "docplatform.Organization", on_delete=models.CASCADE, related_name="events"
    )
    space = models.ForeignKey(
        "docplatform.Space",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="events",
    )
    site = models.ForeignKey(
        "docplatform.Site", null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    payload = models.JSONField(help_text="The event's fields, without eventId and installationId.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    traceparent = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The W3C trace context of what fired it (tracing on): its deliveries continue "
        "that trace.",
    )
    test = models.BooleanField(
        default=False,
        help_text="A sample event (``trigger``, Send test event) fired to one installation "
        'alone: its body carries ``"test": true``, and it is never replayed nor delivered to '
        "another installation.",
    )

    class Meta:
        app_label = "docplatform"
        ordering = ["-created_at", "-id"]
        indexes = [
            # The events API's pages (``docplatform.keyset``): an organization's events,
            # newest first, read from where the previous page ended.
            models.Index(fields=["organization", "created_at", "id"], name="event_org_page_idx"),
        ]

    def __str__(self):
        return f"{self.type} {self.id}"


class Delivery(models.Model):
    """One event on its way to one installation: the outbox row a consumer works through.

    ``event_uuid`` is the payload's ``eventId``: made once per (event, installation), the same
    on every retry and redelivery. ``consumer`` names the registered consumer that takes it
    (``docplatform.events.registry``). A consumer claims the row with a lease before working
    on it; the sweeper re-queues rows never queued or whose lease ran out.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RETRYING = "retrying", "Retrying"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    OPEN_STATUSES = (Status.PENDING, Status.RETRYING)

    id = models.BigAutoField(primary_key=True)
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="deliveries"
    )
    consumer = models.CharField(max_length=16, help_text="The registered consumer's name.")
    event_uuid = models.UUIDField(unique=True, help_text="The payload's eventId.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0, help_text="Attempts in the current chain.")
    chain = models.PositiveIntegerField(
        default=1, help_text="Bumped by each manual redelivery, which starts the attempts anew."
    )
    queued_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempt_started_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the lease's holder began its attempt (a consumer bounding its work in "
        "flight took its turn); cleared when the delivery is claimed or settled.",
    )
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="How long the last attempt took."
    )
    outcome = models.CharField(max_length=200, blank=True, help_text="What the consumer did.")
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["status", "queued_at"], name="delivery_open_idx"),
            # An installation's deliveries, newest first, a page at a time (the API's
            # cursor pages and the delivery log: ``docplatform.keyset``).
            models.Index(
                fields=["installation", "created_at", "id"], name="delivery_install_page_idx"
            ),
            # A drain's claim: a consumer's open deliveries, oldest first, without reading
            # the closed ones or sorting all the open ones.
            models.Index(
                fields=["consumer", "id"],
                condition=models.Q(status__in=["pending", "retrying"]),
                name="delivery_due_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["event", "installation"], name="one_delivery_per_event")
        ]

    def __str__(self):
        return f"{self.event.type} -> {self.installation_id} ({self.status})"


class DrainRequest(models.Model):
    """The drain request flag of a batch consumer (see ``registry.Consumer.drain_task_name``):
    set while a drain is queued, or running and not yet caught up.

    Producers send a drain only when the flag is clear: a burst of events then costs one
    task, not one per delivery, and what commits while a drain runs joins its next batch. A
    drain that caught up clears the flag, then claims once more for what committed before.
    ``requested_at`` in the future marks a publish still in progress (until that deadline),
    which another producer takes over (``outbox._drain_send``).
    """

    consumer = models.CharField(primary_key=True, max_length=16)
    requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"

    def __str__(self):
        return f"drain of {self.consumer}"
