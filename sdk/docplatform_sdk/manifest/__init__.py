"""The integration manifest: parsing and checking ``service-manifest.yaml`` (pure Python).

``check_manifest(path, env=..., organization_is_internal=...)`` returns a ``CheckResult``
with every error and warning at once, and the typed ``Manifest`` when there is no error. It
never raises on any input. This package must not import Django: the CLI, the publish service
and the REST API all call it.
"""

from .checker import check_manifest, manifest_from_text
from .constants import (
    CATEGORIES,
    DEFAULT_TARGET,
    EVENT_SCOPES,
    INTERNAL_SCOPES,
    MANIFEST_FILENAME,
    PROPERTY_TYPES,
    SCOPES,
    TARGETS,
    VISIBILITIES,
)
from .types import Asset, CheckResult, Manifest, Problem

__all__ = [
    "CATEGORIES",
    "DEFAULT_TARGET",
    "EVENT_SCOPES",
    "INTERNAL_SCOPES",
    "MANIFEST_FILENAME",
    "PROPERTY_TYPES",
    "SCOPES",
    "TARGETS",
    "VISIBILITIES",
    "Asset",
    "CheckResult",
    "Manifest",
    "Problem",
    "check_manifest",
    "manifest_from_text",
]
