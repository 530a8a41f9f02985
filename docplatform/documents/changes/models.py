"""A change request: a base revision of its space plus its own revisions (the pages as the
change request has them), its reviewers and reviews. Registered with the docplatform app
(``docplatform.models``)."""

from django.conf import settings
from django.db import models


class ChangeRequest(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        MERGED = "merged", "Merged"
        CLOSED = "closed", "Closed"

    space = models.ForeignKey(
        "docplatform.Space", on_delete=models.CASCADE, related_name="change_requests"
    )
    number = models.PositiveIntegerField(help_text="Counts from 1 in each space.")
    subject = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    # The space's revision the change request's pages were made from: the merge's base. Null
    # for a change request of a space that had no content yet.
    base_revision = models.ForeignKey(
        "docplatform.Revision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    merged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    merged_revision = models.ForeignKey(
        "docplatform.Revision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["space_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["space", "number"], name="one_number_per_space")
        ]

    def __str__(self):
        return f"#{self.number} {self.subject}"


class ChangeRequestRevision(models.Model):
    """The change request's pages as one save left them ({path, title, body}, in navigation
    order): its own history, apart from the space's (a space's ``Revision`` is its content)."""

    change_request = models.ForeignKey(
        ChangeRequest, on_delete=models.CASCADE, related_name="revisions"
    )
    pages = models.JSONField()
    message = models.CharField(max_length=500, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.change_request} @ {self.pk}"


class Review(models.Model):
    class Verdict(models.TextChoices):
        APPROVED = "approved", "Approved"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"

    change_request = models.ForeignKey(
        ChangeRequest, on_delete=models.CASCADE, related_name="reviews"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(max_length=24, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"{self.reviewer_id} {self.status} {self.change_request}"
