"""The review of a public listing: one row per released version whose manifest says
``visibility: public`` (DESIGN.md, "who installs")."""

from django.conf import settings
from django.db import models


class ListingReview(models.Model):
    """Whether other organizations may be offered a public version. The owning organization
    runs and installs it at once; others see the newest approved one
    (``policies.shared_version_of``).

    A version asking for no scope and no host beyond the approved version before it is approved
    at publish (``automatic``); one asking for more, or the first public one, waits for an
    operator (the admin's review queue, ``manage.py integration review``, the review API)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    version = models.OneToOneField(
        "integrations.IntegrationVersion", on_delete=models.CASCADE, related_name="review"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    automatic = models.BooleanField(
        default=False, help_text="Approved at publish: no new scope or host."
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The staff user who decided (none: a command, or automatic).",
    )
    reason = models.TextField(blank=True, help_text="Why it was rejected (or approved).")
    findings = models.JSONField(
        default=list, blank=True, help_text="The checks' warnings at publish: [{path, message}]."
    )
    new_scopes = models.JSONField(
        default=list, blank=True, help_text="Scopes beyond the approved version's."
    )
    new_hosts = models.JSONField(
        default=list, blank=True, help_text="Hosts beyond the approved version's."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["status", "created_at"], name="listing_review_queue")]

    def __str__(self):
        return f"review of {self.version} ({self.status})"
