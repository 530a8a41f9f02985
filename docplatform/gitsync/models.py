"""A space's Git connection and its syncs. Registered with the docplatform app
(``docplatform.models``)."""

from django.conf import settings
from django.db import models

from ..crypto import EncryptedJSONField


class GitConnection(models.Model):
    """The Git repository and branch a space syncs with (one per space). ``url`` is the address
    as entered (checked against ``GIT_SYNC_ALLOWED``); ``credentials`` ({"username",
    "password"} or {"token"}) are encrypted at rest and never shown back."""

    space = models.OneToOneField(
        "docplatform.Space", on_delete=models.CASCADE, related_name="git_connection"
    )
    url = models.CharField(max_length=2000)
    branch = models.CharField(max_length=255, default="main")
    credentials = EncryptedJSONField(default=dict, blank=True)
    sync_on_revision = models.BooleanField(
        default=False, help_text="Write every new revision to the branch."
    )
    synced_commit = models.CharField(
        max_length=64,
        blank=True,
        help_text="The commit of the last sync that succeeded: the base of the next merge.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "docplatform"

    def __str__(self):
        return f"{self.space_id} <-> {self.url}#{self.branch}"


class GitSync(models.Model):
    """One sync of a space with its branch: ``export`` writes the current revision as a commit,
    ``import`` makes a revision from the branch. At most one runs per space at a time."""

    class Direction(models.TextChoices):
        EXPORT = "export", "Sync now (to Git)"
        IMPORT = "import", "Import (from Git)"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCESS = "success", "Succeeded"
        FAILED = "failed", "Failed"

    FINISHED = (Status.SUCCESS, Status.FAILED)

    space = models.ForeignKey(
        "docplatform.Space", on_delete=models.CASCADE, related_name="git_syncs"
    )
    direction = models.CharField(max_length=8, choices=Direction.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    trigger = models.CharField(
        max_length=16, default="manual", help_text="manual, revision (sync on every revision)"
    )
    url = models.CharField(max_length=2000, help_text="The repository as it was at the sync.")
    branch = models.CharField(max_length=255)
    revision = models.ForeignKey(
        "docplatform.Revision",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Export: the revision written. Import: the revision made (none if unchanged).",
    )
    commit = models.CharField(max_length=64, blank=True, help_text="The commit written or read.")
    reason = models.TextField(blank=True, help_text="Why it failed.")
    skipped = models.JSONField(
        default=list, blank=True, help_text="Import: files skipped, each {path, reason}."
    )
    merged = models.BooleanField(
        default=False,
        help_text="The branch and the space had both changed since the last sync: merged.",
    )
    conflicts = models.JSONField(
        default=list,
        blank=True,
        help_text="Pages both changed where the changes overlap (nothing was written).",
    )
    change_request = models.ForeignKey(
        "docplatform.ChangeRequest",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="A conflict's: the branch's side, opened for a person to resolve.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["space"],
                condition=models.Q(status="running"),
                name="one_running_git_sync_per_space",
            )
        ]

    def __str__(self):
        return f"{self.direction} of {self.space_id} ({self.status})"
