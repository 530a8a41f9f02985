"""Vocabularies and limits of the integration manifest.

The installations code reuses the vocabularies; the limits are the checker's own choices where
the specification gives none (it only fixes the 2048-character ``summary``).
"""

from __future__ import annotations

MANIFEST_FILENAME = "service-manifest.yaml"

VISIBILITIES: tuple[str, ...] = ("private", "unlisted", "public")

CATEGORIES: tuple[str, ...] = (
    "analytics",
    "collaboration",
    "content",
    "marketing",
    "authenticated-access",
    "other",
)

#: Names that real manifests use for a category of ours, used for "did you mean" hints.
CATEGORY_ALIASES: dict[str, str] = {"visitor-auth": "authenticated-access"}

#: Scopes only integrations of an internal organization may request (DESIGN decision).
INTERNAL_SCOPES: tuple[str, ...] = ("site:script:inject", "site:script:cookies")

#: The specification's table, plus ``page:feedback:read`` (DESIGN: the webhook integration
#: needs it for ``page_feedback`` events).
SCOPES: tuple[str, ...] = (
    "space:content:read",
    "space:content:write",
    "space:metadata:read",
    "space:metadata:write",
    "space:git:sync",
    "site:metadata:read",
    "site:views:read",
    "site:script:inject",
    "site:script:cookies",
    "site:visitor:auth",
    "site:visitor:claims",
    "site:adaptive:read",
    "site:adaptive:write",
    "openapi:read",
    "openapi:write",
    "conversations:ingest",
    "page:feedback:read",
)

PROPERTY_TYPES: tuple[str, ...] = ("string", "number", "boolean", "button")

#: The events the platform fires to integration code, and the scope an installation needs to
#: receive each (None: every installation receives it). One home: the platform's payload
#: catalogue (docplatform/events/catalogue.py) reads the scopes from here, and ``check``
#: tells an author whose handler names another event or lacks its scope.
EVENT_SCOPES: dict[str, str | None] = {
    "installation_setup": None,
    "space_installation_setup": None,
    "site_installation_setup": None,
    "space_view": "space:metadata:read",
    "space_content_updated": "space:content:read",
    "space_visibility_updated": "space:metadata:read",
    "space_gitsync_started": "space:git:sync",
    "space_gitsync_completed": "space:git:sync",
    "site_view": "site:views:read",
    "page_feedback": "page:feedback:read",
}

TARGETS: tuple[str, ...] = ("all", "organization", "space", "site")
DEFAULT_TARGET = "all"

CONFIGURATION_LEVELS: tuple[str, ...] = ("account", "site", "space")

#: Top-level keys in the order the specification lists them, then the extensions DESIGN
#: accepts because real manifests carry them.
TOP_LEVEL_KEYS: tuple[str, ...] = (
    "name",
    "title",
    "description",
    "summary",
    "organization",
    "visibility",
    "scopes",
    "script",
    "blocks",
    "categories",
    "icon",
    "previewImages",
    "externalLinks",
    "configurations",
    "secrets",
    "target",
    "envs",
    "contentSecurityPolicy",
    "network",
)
REQUIRED_KEYS: tuple[str, ...] = (
    "name",
    "title",
    "description",
    "organization",
    "visibility",
    "scopes",
)

BLOCK_KEYS: tuple[str, ...] = ("id", "title", "description")
# ``visitors: true``: the block's buttons work for a published site's visitors too (anonymous);
# without it a site shows the block read-only.
BLOCK_OPTIONAL_KEYS: tuple[str, ...] = ("visitors",)
EXTERNAL_LINK_KEYS: tuple[str, ...] = ("label", "url")
CONFIGURATION_KEYS: tuple[str, ...] = ("properties", "required", "componentId")
PROPERTY_KEYS: tuple[str, ...] = (
    "type",
    "title",
    "description",
    "default",
    "enum",
    "completion_url",
    "button_text",
    "callback_url",
)

#: Directives of Content Security Policy Level 3 (plus widely shipped ones), for typo hints.
CSP_DIRECTIVES: tuple[str, ...] = (
    "default-src",
    "script-src",
    "script-src-elem",
    "script-src-attr",
    "style-src",
    "style-src-elem",
    "style-src-attr",
    "img-src",
    "connect-src",
    "font-src",
    "frame-src",
    "child-src",
    "media-src",
    "object-src",
    "worker-src",
    "manifest-src",
    "prefetch-src",
    "fenced-frame-src",
    "form-action",
    "frame-ancestors",
    "base-uri",
    "sandbox",
    "upgrade-insecure-requests",
    "block-all-mixed-content",
    "report-uri",
    "report-to",
    "require-trusted-types-for",
    "trusted-types",
)

# --- limits -------------------------------------------------------------------------------
KIB = 1024
MIB = 1024 * KIB

MAX_MANIFEST_BYTES = 256 * KIB
#: Nesting of mappings and sequences (aliases expanded). Real manifests nest 5 deep.
MAX_YAML_DEPTH = 32
#: Nodes of the document once every alias is expanded ("billion laughs" guard).
MAX_YAML_NODES = 100_000

MAX_NAME_LENGTH = 64
MAX_TITLE_LENGTH = 128
MAX_DESCRIPTION_LENGTH = 1024
MAX_SUMMARY_LENGTH = 2048
MAX_ORGANIZATION_LENGTH = 64
MAX_IDENTIFIER_LENGTH = 64
MAX_LABEL_LENGTH = 128
MAX_URL_LENGTH = 2048
MAX_SECRET_BYTES = 64 * KIB

MAX_SCRIPT_BYTES = 1 * MIB
MAX_IMAGE_BYTES = 2 * MIB
#: Decoded pixels of one image (a 2 MiB file can decode to gigabytes).
MAX_IMAGE_PIXELS = 25_000_000
MAX_PREVIEW_IMAGES = 10
PREVIEW_IMAGE_SIZE = (1600, 800)


def human_size(size: int) -> str:
    """A byte count for messages: ``2 MiB``, ``300.5 KiB``, ``12 bytes``."""
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"
