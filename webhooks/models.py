"""The webhook integration's own data: signing secrets and the attempt log."""

import secrets as random

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
