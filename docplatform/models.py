"""The host platform: organizations and their members, spaces, sites and API tokens."""

import hashlib
import secrets
from importlib import import_module

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.core.validators import RegexValidator
from django.db import models

from .crypto import EncryptedJSONField
from .ids import new_id

SUBDOMAIN_VALIDATOR = RegexValidator(
    r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",
    "A subdomain is 1 to 63 lower-case letters, digits or hyphens, not starting or ending "
    "with a hyphen.",
)


class Organization(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    subdomain = models.CharField(max_length=63, unique=True, validators=[SUBDOMAIN_VALIDATOR])
    title = models.CharField(max_length=200)
    internal = models.BooleanField(
        default=False,
        help_text="Set by operators: an internal organization's integrations may use the "
        "scopes reserved for internal platform use (site:script:inject, site:script:cookies).",
    )
    members_may_install = models.BooleanField(
        default=False,
        help_text="Set by its admins: members (not only admins) may install integrations whose "
        "scopes write nothing (docplatform.access).",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="organizations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["subdomain"]

    def __str__(self):
        return self.subdomain


class Membership(models.Model):
    class Role(models.TextChoices):
        """Admins manage the organization (members, space settings); admins and members edit
        its spaces; readers only read them."""

        ADMIN = "admin", "Admin"
        MEMBER = "member", "Member"
        READER = "reader", "Reader"

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="unique_membership")
        ]

    def __str__(self):
        return f"{self.user} in {self.organization} ({self.role})"


def default_search_language() -> str:
    return settings.SEARCH_LANGUAGE


class Space(models.Model):
    class Visibility(models.TextChoices):
        PRIVATE = "private", "Private (members only)"
        UNLISTED = "unlisted", "Unlisted (anyone with the link)"
        PUBLIC = "public", "Public"

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="spaces")
    title = models.CharField(max_length=200)
    visibility = models.CharField(
        max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    current_revision = models.ForeignKey(
        "Revision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    readers_may_comment = models.BooleanField(
        default=False,
        help_text="Set by its admins: the organization's readers (not only its admins and "
        "members) may comment on its pages (docplatform.access).",
    )
    # Merge rules of its change requests (``changes``), and whether members save only through
    # them (admins still save directly).
    required_approvals = models.PositiveSmallIntegerField(
        default=0, help_text="Approvals a change request needs before it is merged."
    )
    require_up_to_date = models.BooleanField(
        default=False,
        help_text="A change request is merged only when made from the current revision.",
    )
    change_requests_only = models.BooleanField(
        default=False, help_text="Members edit through change requests only; admins may save."
    )
    # The text search configuration its pages are indexed and searched with on PostgreSQL (a
    # version is shared by every site publishing the space, so the language is the space's):
    # set by ``search_index.space_search_language_set``, which indexes its pages again.
    search_language = models.CharField(
        max_length=63,
        default=default_search_language,
        editable=False,
        help_text="PostgreSQL's text search configuration of its pages (english, german, "
        "simple...).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "title"]

    def __str__(self):
        return self.title


class Revision(models.Model):
    """An immutable snapshot of a space's content: the pages as they were at that revision.

    A space's revisions are one line, each made on top of the one before (``parent``), and
    numbered along it (``number``, from 1): a revision stores no page itself, its pages are the
    page versions valid at its number (``Page``), so a revision that changed one page wrote
    one page."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="revisions")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    number = models.PositiveIntegerField(editable=False)
    page_count = models.PositiveIntegerField(default=0, editable=False)
    message = models.CharField(max_length=500, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # A revision written with an installation's token: the installation that acted, and what
    # it was called then (its integration's title), shown in the history and the API.
    author_installation = models.CharField(max_length=32, blank=True)
    author_label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    git_commit = models.CharField(
        max_length=64, blank=True, help_text="The Git commit it was imported from, if it was."
    )

    class Meta:
        ordering = ["-created_at"]
        get_latest_by = "created_at"
        constraints = [
            models.UniqueConstraint(fields=["space", "number"], name="one_revision_number")
        ]

    def __str__(self):
        return f"{self.space} @ {self.id}"

    def save(self, *args, **kwargs):
        if self.number is None:  # the next along the space's line (its writes hold its lock)
            last = Revision.objects.filter(space_id=self.space_id).aggregate(models.Max("number"))[
                "number__max"
            ]
            self.number = (last or 0) + 1
        super().save(*args, **kwargs)

    @property
    def pages(self) -> models.QuerySet:
        """The page versions this revision holds."""
        return Page.objects.filter(
            space_id=self.space_id, valid_from__lte=self.number, valid_to__gt=self.number
        )


#: ``Page.valid_to`` of a version no revision has replaced yet: it is in the current revision.
CURRENT = 2**31 - 1


class Page(models.Model):
    """One version of a page of a space: the page as revisions ``valid_from`` up to (not
    including) ``valid_to`` hold it, by their numbers (``CURRENT``: up to now). A revision
    that changes a page ends its version and starts a new one; the pages it does not change
    it shares with its parent. ``path`` places it in the navigation (``guide/install`` sits
    under ``guide``); ``position`` orders it among its space's pages (``positions``: a key
    placed between its neighbours', so that moving or adding a page writes that page alone)."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="page_versions")
    valid_from = models.PositiveIntegerField()
    valid_to = models.PositiveIntegerField(default=CURRENT)
    path = models.CharField(max_length=300)
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True, help_text="Markdown.")
    # Adaptive content: shown on published sites only to visitors whose claims make it hold
    # (``conditions``); "" shows it to everyone.
    condition = models.CharField(
        max_length=1000,
        blank=True,
        default="",
        help_text='A condition on the visitor\'s claims, e.g. visitor.claims.plan == "pro"; '
        "empty: shown to everyone.",
    )
    position = models.CharField(max_length=255, default="5")
    # The body rendered when the page was written (``docplatform.markdown``), so reading never
    # parses Markdown: the sanitized HTML, its headings and blocks, and the renderer's version
    # (an older one is rendered again at the next read).
    html = models.TextField(blank=True, editable=False)
    outline = models.JSONField(default=dict, blank=True, editable=False)
    rendered_with = models.PositiveSmallIntegerField(default=0, editable=False)
    # What search finds of it on PostgreSQL (``search_index``): its title (weight A) and the
    # text its readers see (B), written with it; null on SQLite, whose FTS5 table
    # (``search_index.FTS_TABLE``) holds the same. Its GIN index (current versions only) and
    # its storage (MAIN: kept in the row, which ranking reads) are set by migration 0025 on
    # PostgreSQL alone, so the index is not among ``indexes``.
    search_vector = SearchVectorField(null=True, editable=False)

    class Meta:
        ordering = ["position", "path"]
        constraints = [
            models.UniqueConstraint(
                fields=["space", "path"],
                condition=models.Q(valid_to=CURRENT),
                name="one_current_page_per_path",
            )
        ]
        indexes = [
            models.Index(fields=["space", "valid_to", "position"], name="page_until_idx"),
            models.Index(fields=["space", "path", "valid_from"], name="page_path_idx"),
            models.Index(fields=["space", "valid_from"], name="page_since_idx"),
        ]

    def __str__(self):
        return self.title

    @property
    def current(self) -> bool:
        return self.valid_to == CURRENT


class SpaceVisit(models.Model):
    """When a visitor last opened a space's reader and ``space_view`` fired for it: at most
    once per visitor, space and ``READER_VIEW_INTERVAL`` (``docplatform.visits``, the one rule)."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    visitor = models.CharField(max_length=80, help_text="user:<id> or anon:<anonymous id>")
    last_fired_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "visitor"], name="one_visit_per_visitor")
        ]

    def __str__(self):
        return f"{self.visitor} in {self.space_id}"


def new_visitor_signing_key() -> str:
    """A site's visitor key: 256 random bits, a string (integrations sign with its bytes)."""
    return secrets.token_urlsafe(32)


class Site(models.Model):
    """A published site: it publishes one or more spaces of its organization, in the order
    its admins give (``SiteSpace.position``)."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="sites")
    title = models.CharField(max_length=200)
    spaces = models.ManyToManyField(Space, related_name="sites", blank=True, through="SiteSpace")
    published = models.BooleanField(
        default=False, help_text="Served on SITES_URL; an unpublished site answers 404 there."
    )
    custom_domains = models.JSONField(
        default=list,
        blank=True,
        help_text="Host names the site is also served on (e.g. docs.example.com): the beacon "
        "accepts their pages' URLs too.",
    )
    audience = models.CharField(
        max_length=16,
        choices=[("public", "Public"), ("authenticated", "Authenticated")],
        default="public",
        help_text="Public: anyone reads it. Authenticated: only visitors signed in through "
        "visitor_auth_installation (sites.visitor_sessions).",
    )
    visitor_auth_installation = models.CharField(
        max_length=32,
        blank=True,
        default="",
        help_text="The id of the site installation (scope site:visitor:auth) that signs its "
        "visitors in, when the audience is authenticated.",
    )
    visitor_signing_key = EncryptedJSONField(
        default=new_visitor_signing_key,
        editable=False,
        help_text="Signs the visitor tokens (HS256, its UTF-8 bytes the key); given only to "
        "the site's installations holding site:visitor:auth, never shown.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "title"]

    def __str__(self):
        return self.title

    @property
    def authenticated(self) -> bool:
        return self.audience == "authenticated"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A personal API token. Only its SHA-256 hash is stored; the token is shown once.

    It works until it is revoked or, when it has one, until ``expires_at``."""

    PREFIX = "dpt_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=12, editable=False, help_text="The token's last characters.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="When the token stops working; empty: never."
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} (…{self.hint})"

    @classmethod
    def generate(cls) -> str:
        return cls.PREFIX + secrets.token_urlsafe(32)


class WorkerPing(models.Model):
    """A round trip through the Celery broker and a worker: `manage.py worker_ping`."""

    requested_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)

    def __str__(self):
        return f"ping {self.pk}"


# Django looks for an app's models in this module. The core's other models live with them
# (the outbox, the audit log, the invitations) and are imported here; the features' (the
# documents' change requests, comments and presence, the sites', Git sync's, the
# conversations', the OpenAPI documents') are loaded by name, since the core imports no feature
# (``pyproject.toml``'s contracts): import them from their feature.
from .audit.models import AuditEntry  # noqa: E402, F401
from .events.models import Delivery, DrainRequest, Event  # noqa: E402, F401
from .teams.models import Invitation  # noqa: E402, F401

FEATURE_MODELS = (
    "docplatform.documents.models",
    "docplatform.documents.changes.models",
    "docplatform.documents.comments.models",
    "docplatform.sites.models",
    "docplatform.gitsync.models",
    "docplatform.conversations.models",
    "docplatform.openapi.models",
)
for _feature_models in FEATURE_MODELS:
    import_module(_feature_models)
