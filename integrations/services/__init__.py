"""Writes of the integrations app (HackSoft layering: views, APIs and tasks call these)."""

from .publishing import (
    Outcome,
    PublishResult,
    integration_publish,
    integration_publish_folder,
    integration_unpublish,
    integration_version_unpublish,
    manifest_check,
    problems_error,
)
from .releases import ReleaseResult, installation_mark_development, integration_release

__all__ = [
    "Outcome",
    "PublishResult",
    "ReleaseResult",
    "installation_mark_development",
    "integration_publish",
    "integration_publish_folder",
    "integration_release",
    "integration_unpublish",
    "integration_version_unpublish",
    "manifest_check",
    "problems_error",
]
