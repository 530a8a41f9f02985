"""The webhook integration's own data: signing secrets, the attempt log, endpoint states, bulk
redeliveries and replays."""

import secrets as random

from django.conf import settings
from django.db import models
from django.utils import timezone

from docplatform.crypto import EncryptedJSONField


def new_signing_secret() -> str:
    """32 random bytes, as `whsec_` + base64url; the HMAC key is this string's UTF-8 bytes."""
    return "whsec_" + random.token_urlsafe(32)


class SigningSecret(models.Model):
    """A webhook installation's signing secret. After a rotation the old one signs too, until
    ``expires_at``; the current one has no expiry."""

    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="signing_secrets"
    )
    secret = EncryptedJSONField()
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["installation_id", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["installation"],
                condition=models.Q(expires_at__isnull=True),
                name="one_current_signing_secret",
            )
        ]

    def __str__(self):
        return f"signing secret of {self.installation_id}"


class DeliveryAttempt(models.Model):
    """One HTTP attempt of a webhook delivery. A manual redelivery starts a new ``chain``."""

    delivery = models.ForeignKey(
        "docplatform.Delivery", on_delete=models.CASCADE, related_name="attempts_log"
    )
    chain = models.PositiveIntegerField(default=1)
    number = models.PositiveIntegerField(help_text="1 for the first attempt of the chain.")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    url = models.CharField(max_length=2048)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, help_text="A network error, if any.")
    outcome = models.CharField(max_length=16)
    request_headers = models.JSONField(
        default=dict, blank=True, help_text="The headers sent, the signature header included."
    )
    response_headers = models.JSONField(default=dict, blank=True)
    response_body = models.TextField(blank=True, help_text="The first 1 KB of the response.")
    next_delay = models.FloatField(
        null=True, blank=True, help_text="Seconds until the retry it scheduled, if any."
    )

    class Meta:
        ordering = ["delivery_id", "chain", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["delivery", "chain", "number"], name="one_attempt_number"
            )
        ]

    def __str__(self):
        return f"attempt {self.chain}.{self.number} of delivery {self.delivery_id}"


class EndpointState(models.Model):
    """A webhook installation's endpoint, once it was disabled: when and why (every attempt
    failed for ``WEBHOOK_DISABLE_AFTER_DAYS``), and who re-enabled it. No row: never disabled.
    While disabled, no delivery is made to it."""

    installation = models.OneToOneField(
        "integrations.Installation",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="webhook_endpoint",
    )
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    reenabled_at = models.DateTimeField(null=True, blank=True)
    reenabled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        verbose_name = "webhook endpoint"

    def __str__(self):
        state = "disabled" if self.disabled_at else "enabled"
        return f"endpoint of {self.installation_id} ({state})"

    @property
    def is_disabled(self) -> bool:
        return self.disabled_at is not None


class BulkRedelivery(models.Model):
    """ "Resend all failed since ...": the failed deliveries of one installation chosen when it
    was asked (at most ``WEBHOOK_BULK_REDELIVERY_LIMIT``), sent again by a task that counts
    its progress in ``done``."""

    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="bulk_redeliveries"
    )
    since = models.DateTimeField(help_text="Failed deliveries finished at or after this.")
    delivery_ids = models.JSONField(default=list, help_text="The deliveries to send again.")
    done = models.PositiveIntegerField(
        default=0, help_text="How many were handled so far (sent again or skipped)."
    )
    skipped = models.PositiveIntegerField(
        default=0, help_text="How many were no longer failed when their turn came."
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "bulk redeliveries"

    def __str__(self):
        return f"resend of {self.total} failed deliveries of {self.installation_id}"

    @property
    def total(self) -> int:
        return len(self.delivery_ids)


class Replay(models.Model):
    """A replay: the events of a time range an endpoint should have received (by its event
    selection and its space or site) and did not get (no delivery, or one cancelled or
    failed: it was paused or disabled), or, with ``include_delivered``, every one of them;
    chosen when it is asked (the oldest first, at most ``WEBHOOK_REPLAY_LIMIT``) and queued
    ``WEBHOOK_REPLAY_BATCH`` at a time by a task, each with the eventId its delivery to the
    endpoint has (``rules.replay_event_uuid`` for one it never had)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"
        STOPPED = "stopped", "Stopped"

    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)

    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="webhook_replays"
    )
    since = models.DateTimeField(help_text="Events fired at or after this.")
    until = models.DateTimeField(help_text="Events fired before this.")
    include_delivered = models.BooleanField(
        default=False, help_text="Also the events the endpoint got (their original eventIds)."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    matched = models.PositiveIntegerField(
        default=0, help_text="Events of the range to send; more than chosen past the limit."
    )
    event_ids = models.JSONField(default=list, help_text="The events chosen, oldest first.")
    queued = models.PositiveIntegerField(
        default=0, help_text="How many of the chosen events were handled (queued or skipped)."
    )
    skipped = models.PositiveIntegerField(
        default=0, help_text="Delivered or in progress meanwhile: not sent."
    )
    delivery_ids = models.JSONField(default=list, help_text="The deliveries it queued.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"replay {self.pk} of {self.installation_id} ({self.status})"

    @property
    def found(self) -> int:
        """The events chosen."""
        return len(self.event_ids)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES


class EndpointThrottle(models.Model):
    """The rate and the 429 state of a webhook endpoint, where they are held in the database
    (the broker is not Redis; see ``transport.limits``): a token bucket of ``tokens`` (at most
    ``max_per_second``) last refilled at ``refilled_at``, and ``not_before``, set by a 429's
    ``Retry-After``. Its row is locked (``select_for_update``) while a slot is taken, which
    also serializes the endpoint's ``EndpointLease`` count."""

    installation = models.OneToOneField(
        "integrations.Installation",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="webhook_throttle",
    )
    tokens = models.FloatField(default=0)
    refilled_at = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(
        null=True, blank=True, help_text="The receiver asked (429 Retry-After) to wait until then."
    )
    waiting = models.JSONField(
        default=dict,
        blank=True,
        help_text="The holders (drains) held back lately: name to when they stop counting "
        "(Unix time), for the fair shares.",
    )

    def __str__(self):
        return f"throttle of {self.installation_id}"


class EndpointLease(models.Model):
    """A POST in flight to a webhook endpoint (database-held limits): deleted when it ends;
    one a killed worker never released stops counting at ``expires_at``."""

    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="+"
    )
    holder = models.CharField(max_length=32, default="", help_text="The drain that holds it.")
    token = models.CharField(max_length=32, unique=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["installation", "expires_at"], name="webhooks_lease_expiry"),
        ]

    def __str__(self):
        return f"lease {self.token} of {self.installation_id}"
