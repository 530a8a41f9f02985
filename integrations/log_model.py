"""The integration log: one row per call of an integration's code."""

from django.db import models


class IntegrationLog(models.Model):
    """One call of an integration's code, as its owners and the installing organization's
    admins see it: what it was, how it ended, what the code printed (its first 4 KB) and the
    error with its traceback. One row per call, never per printed line; an event that an
    installation did not receive for lack of a scope is one row too (``not_delivered``)."""

    class Kind(models.TextChoices):
        EVENT = "event", "Event"
        FETCH = "fetch", "Fetch"
        UI_RENDER = "ui_render", "Component render"
        COMPLETION = "completion", "Completion"
        OAUTH = "oauth", "OAuth"
        NOT_DELIVERED = "not_delivered", "Not delivered"

    class Outcome(models.TextChoices):
        OK = "ok", "OK"
        ERROR = "error", "Error"
        TIMEOUT = "timeout", "Timeout"
        REFUSED = "refused", "Refused"
        NOT_DELIVERED = "not_delivered", "Not delivered"

    OUTPUT_LIMIT = 4096
    ERROR_LIMIT = 8192

    id = models.BigAutoField(primary_key=True)
    time = models.DateTimeField(help_text="When the call started.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    integration = models.ForeignKey(
        "integrations.Integration", on_delete=models.CASCADE, related_name="logs"
    )
    installation = models.ForeignKey(
        "integrations.Installation",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="logs",
    )
    version = models.PositiveIntegerField(null=True, blank=True)
    event = models.CharField(max_length=64, blank=True, help_text="The event type, if any.")
    test = models.BooleanField(
        default=False,
        help_text='The event was a sample one (``"test": true``: trigger, Send test event).',
    )
    request = models.CharField(
        max_length=500, blank=True, help_text='"GET /path" (no query), or what was rendered.'
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    output = models.TextField(blank=True, help_text="What the code printed: its first 4 KB.")
    error = models.TextField(blank=True, help_text="The error, with its traceback.")

    class Meta:
        ordering = ["id"]
        verbose_name = "integration log line"
        indexes = [
            models.Index(fields=["integration", "id"], name="log_by_integration"),
            models.Index(fields=["installation", "id"], name="log_by_installation"),
            models.Index(fields=["time"], name="log_by_time"),
        ]

    def __str__(self):
        return f"{self.integration_id} {self.kind} {self.outcome} at {self.time:%Y-%m-%d %H:%M:%S}"
