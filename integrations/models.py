"""What an integration is: its identity, its current listing data and its immutable versions."""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from docplatform.crypto import EncryptedJSONField
from docplatform.ids import new_id
from docplatform.models import Organization, hash_token

from .log_model import IntegrationLog  # noqa: F401 - every model of the app is importable here
from .review_model import ListingReview  # noqa: F401


def new_install_link_token() -> str:
    return secrets.token_urlsafe(24)


class Integration(models.Model):
    """An integration, named uniquely across the platform and owned by one organization.

    The listing fields mirror the released version's manifest (``IntegrationVersion.listing``),
    so the catalogue can filter and search them without reading versions. Which version runs
    for an installation: ``policies.runnable_version``; other organizations are offered
    ``shared_version`` (a public version awaiting review is its owners' alone).
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
        "IntegrationVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The newest version, of either channel.",
    )
    released_version = models.ForeignKey(
        "IntegrationVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="What installations run: set by publish and by rollback.",
    )
    development_version = models.ForeignKey(
        "IntegrationVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="What development installations run, until a release replaces it.",
    )
    shared_version = models.ForeignKey(
        "IntegrationVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="What other organizations are offered and their installations run: the "
        "released version once it needs no review or was approved, else the newest such "
        "version before it (policies.shared_version_of).",
    )
    install_link_token = models.CharField(
        max_length=64,
        default=new_install_link_token,
        editable=False,
        help_text="The secret of an unlisted integration's shared install link (rotatable).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class IntegrationVersion(models.Model):
    """One published state of an integration, on the release channel (``publish``) or the
    development channel (``dev``). Immutable once written: being released is the
    integration's (``Integration.released_version``), not the version's.

    Each version has its own *integration token* (``dpn_…``), made when it is written: the
    token acting for the integration itself on every installation of it, each within its
    granted scopes (``authentication.IntegrationPrincipal``), handed to its code as
    ``environment.apiTokens.integration`` in the signed runtime envelope only. It is stored
    as its SHA-256 (looked up by it) and encrypted (for the envelope), as installation tokens
    are; a new version brings a new one, and a version's token works only while that version
    runs (``selectors.integration_version_by_api_token``)."""

    class Channel(models.TextChoices):
        RELEASE = "release", "Release"
        DEVELOPMENT = "development", "Development"

    TOKEN_PREFIX = "dpn_"  # noqa: S105 - a prefix, not a secret

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    channel = models.CharField(max_length=16, choices=Channel.choices, default=Channel.RELEASE)
    content_hash = models.CharField(max_length=64)
    manifest = models.JSONField(help_text="The manifest as published, secret values redacted.")
    listing = models.JSONField(
        default=dict,
        blank=True,
        help_text="The integration's listing fields as this version's manifest has them, "
        "copied to the integration when it is released.",
    )
    script_path = models.CharField(
        max_length=300, blank=True, help_text="The entry module of the code; empty: no code."
    )
    bundle = models.BinaryField(
        null=True,
        blank=True,
        help_text="The code: the script and the Python modules beside it (docplatform_sdk."
        "codebundle, canonical JSON).",
    )
    bundle_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the bundle: the runtime checks it."
    )
    secrets = EncryptedJSONField(default=dict, blank=True)
    api_token_hash = models.CharField(
        max_length=64,
        unique=True,
        editable=False,
        help_text="The integration token's SHA-256.",
    )
    api_token = EncryptedJSONField(default="", blank=True, editable=False)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["integration_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["integration", "number"], name="unique_version_number"),
            models.UniqueConstraint(
                fields=["integration", "channel", "content_hash"],
                name="unique_version_content_per_channel",
            ),
        ]

    def __str__(self):
        return f"{self.integration.name} v{self.number}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValidationError("An integration version is immutable: publish a new one.")
        if not self.api_token_hash:
            raw = self.TOKEN_PREFIX + secrets.token_urlsafe(32)
            self.api_token, self.api_token_hash = raw, hash_token(raw)
        super().save(*args, **kwargs)

    @property
    def secret_names(self) -> list[str]:
        return sorted(self.secrets or {})

    @property
    def network_fetch(self) -> list[str] | None:
        """The hosts the manifest lets ``context.fetch`` reach; None: any public host."""
        network = (self.manifest or {}).get("network")
        return list(network.get("fetch") or []) if isinstance(network, dict) else None


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


class Installation(models.Model):
    """An integration installed in an organization, or in one of its spaces or sites.

    The organization-level installation holds the account configuration and the space
    selection; a space or site installation hangs under it (``parent``) with the space's or
    site's own configuration. Button properties' values (OAuth credentials) live in
    ``credentials``, encrypted, never in ``configuration``.
    """

    class Level(models.TextChoices):
        ORGANIZATION = "organization", "Organization"
        SPACE = "space", "Space"
        SITE = "site", "Site"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"

    class SpaceSelection(models.TextChoices):
        ALL = "all", "All spaces"
        SELECTED = "selected", "Selected spaces"

    TOKEN_PREFIX = "dpi_"  # noqa: S105 - a prefix, not a secret

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    integration = models.ForeignKey(
        Integration, on_delete=models.CASCADE, related_name="installations"
    )
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="installations"
    )
    level = models.CharField(max_length=16, choices=Level.choices)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    space = models.ForeignKey(
        "docplatform.Space",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="installations",
    )
    site = models.ForeignKey(
        "docplatform.Site",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="installations",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    status_reasons = models.JSONField(
        default=list, blank=True, help_text="Why the configuration does not validate."
    )
    configuration = models.JSONField(default=dict, blank=True)
    credentials = EncryptedJSONField(default=dict, blank=True)
    external_ids = models.JSONField(default=list, blank=True)
    space_selection = models.CharField(
        max_length=16, choices=SpaceSelection.choices, default=SpaceSelection.ALL
    )
    selected_spaces = models.ManyToManyField(
        "docplatform.Space", blank=True, related_name="selected_by_installations"
    )
    api_token_hash = models.CharField(max_length=64, unique=True, editable=False)
    api_token = EncryptedJSONField(editable=False)
    development = models.BooleanField(
        default=False,
        help_text="Runs the integration's development versions (``dev``); a space or site "
        "installation also does when its organization installation is marked.",
    )
    granted_scopes = models.JSONField(
        default=list,
        blank=True,
        help_text="The scopes the organization granted (at install, and by an admin's "
        "approval); the installation acts with these of its integration's scopes only "
        "(integrations.policies.effective_scopes).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["organization_id", "integration_id", "level", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["integration", "organization"],
                condition=models.Q(level="organization"),
                name="one_installation_per_organization",
            ),
            models.UniqueConstraint(
                fields=["integration", "space"],
                condition=models.Q(space__isnull=False),
                name="one_installation_per_space",
            ),
            models.UniqueConstraint(
                fields=["integration", "site"],
                condition=models.Q(site__isnull=False),
                name="one_installation_per_site",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(level="organization", parent__isnull=True, space__isnull=True)
                    & models.Q(site__isnull=True)
                )
                | models.Q(
                    level="space", parent__isnull=False, space__isnull=False, site__isnull=True
                )
                | models.Q(
                    level="site", parent__isnull=False, site__isnull=False, space__isnull=True
                ),
                name="installation_level_shape",
            ),
        ]

    def __str__(self):
        where = self.space or self.site or self.organization
        return f"{self.integration} in {where}"

    @property
    def effective_configuration(self) -> dict:
        """The configuration as validated and as integration code sees it: the values and
        the button properties' credentials."""
        return {**self.configuration, **(self.credentials or {})}

    #: The manifest configuration that governs an installation, by its level (the
    #: configuration definition itself: ``policies.configuration_definition``).
    CONFIGURATION_LEVELS = {"organization": "account", "space": "space", "site": "site"}

    @property
    def configuration_level(self) -> str:
        """The manifest configuration that governs this installation."""
        return self.CONFIGURATION_LEVELS[self.level]


class OAuthState(models.Model):
    """An OAuth ``state``: issued to the member who pressed an installation's Connect button,
    for one of its ``button`` properties; it expires, and it is consumed once, when the flow
    writes the credentials. A consumed state records who connected the property, and when."""

    nonce = models.CharField(max_length=64, unique=True)
    installation = models.ForeignKey(
        Installation, on_delete=models.CASCADE, related_name="oauth_states"
    )
    property_name = models.CharField(max_length=100)
    issued_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The member who pressed Connect.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    consumed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the flow completed: the property was connected."
    )

    def __str__(self):
        return f"OAuth state of {self.installation_id}"


class ComponentState(models.Model):
    """The props and state of one component instance of an installation: its configuration
    screen (instance ``configuration``) or one block inserted from the quick insert menu.

    ``revision`` goes up with each stored render, so two actions racing on one instance cannot
    silently overwrite each other's state.
    """

    CONFIGURATION_INSTANCE = "configuration"

    installation = models.ForeignKey(
        Installation, on_delete=models.CASCADE, related_name="component_states"
    )
    component_id = models.CharField(max_length=64)
    instance = models.CharField(max_length=64)
    props = models.JSONField(default=dict, blank=True)
    state = models.JSONField(default=dict, blank=True)
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["installation_id", "component_id", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["installation", "component_id", "instance"],
                name="one_state_per_component_instance",
            )
        ]

    def __str__(self):
        return f"{self.component_id}[{self.instance}] of {self.installation_id}"
