"""Writes of the integrations app (HackSoft layering: views, APIs and tasks call these)."""

from .publishing import (
    PublishResult,
    integration_publish,
    integration_unpublish,
    integration_version_unpublish,
    manifest_check,
    problems_error,
)

__all__ = [
    "PublishResult",
    "integration_publish",
    "integration_unpublish",
    "integration_version_unpublish",
    "manifest_check",
    "problems_error",
]
