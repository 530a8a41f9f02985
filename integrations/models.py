"""What an integration is: its identity, its current listing data and its immutable versions."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from docplatform.crypto import EncryptedJSONField
from docplatform.ids import new_id
from docplatform.models import Organization


class Integration(models.Model):
    """An integration, named uniquely across the platform and owned by one organization.

    The listing fields mirror the latest published version's manifest, so the catalogue can
    filter and search them without reading versions.
    """

    class Visibility(models.TextChoices):
        PRIVATE = "private", "Private"
        UNLISTED = "unlisted", "Unlisted"
        PUBLIC = "public", "Public"

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    name = models.SlugField(max_length=64, unique=True)
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="integrations"
    )
    title = models.CharField(max_length=200)
    description = models.TextField()
    summary = models.TextField(blank=True)
    visibility = models.CharField(
        max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    target = models.CharField(max_length=16, default="all")
    scopes = models.JSONField(default=list)
    categories = models.JSONField(default=list)
    blocks = models.JSONField(default=list)
    external_links = models.JSONField(default=list)
    configurations = models.JSONField(
        default=dict, help_text="The manifest's configuration schema (account, site, space)."
    )
    latest_version = models.ForeignKey(
        "IntegrationVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class IntegrationVersion(models.Model):
    """One published state of an integration. Immutable once written."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    manifest = models.JSONField(help_text="The manifest as published, secret values redacted.")
    script_path = models.CharField(max_length=300, blank=True)
    script = models.BinaryField(null=True, blank=True)
    secrets = EncryptedJSONField(default=dict, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["integration_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["integration", "number"], name="unique_version_number"),
            models.UniqueConstraint(
                fields=["integration", "content_hash"], name="unique_version_content"
            ),
        ]

    def __str__(self):
        return f"{self.integration.name} v{self.number}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValidationError("An integration version is immutable: publish a new one.")
        super().save(*args, **kwargs)

    @property
    def secret_names(self) -> list[str]:
        return sorted(self.secrets or {})


class IntegrationAsset(models.Model):
    """An image of a version (its icon or a preview image), served by the marketplace."""

    class Kind(models.TextChoices):
        ICON = "icon", "Icon"
        PREVIEW = "preview", "Preview image"

    version = models.ForeignKey(IntegrationVersion, on_delete=models.CASCADE, related_name="assets")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    position = models.PositiveSmallIntegerField(default=0)
    path = models.CharField(max_length=300)
    content_type = models.CharField(max_length=50)
    content = models.BinaryField()
    width = models.PositiveIntegerField(null=True)
    height = models.PositiveIntegerField(null=True)

    class Meta:
        ordering = ["version_id", "kind", "position"]

    def __str__(self):
        return self.path
