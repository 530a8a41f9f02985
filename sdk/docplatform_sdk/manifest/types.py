"""Values the checker returns: problems, the check result and the typed manifest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codebundle import CodeBundle


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a warning) with a manifest.

    ``path`` names the field (``configurations.account.properties.api_key.default``,
    ``scopes[2]``, ``externalLinks[0].url``); problems with the file itself use the manifest
    file name, with ``:LINE:COL`` when the YAML text is at fault.
    """

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Asset:
    """A file of the integration named by the manifest (``script``, ``icon``, previews)."""

    path: str  # as written in the manifest, normalized (no "./", forward slashes)
    content: bytes = field(repr=False)
    content_type: str
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Manifest:
    """A manifest that passed every check, normalized.

    ``secrets`` holds the resolved secret values and is never shown in ``repr``; ``raw`` is
    the parsed document with every secret value replaced by its placeholder text (or
    ``"***"`` for a literal), so it is safe to store and to show.
    """

    name: str
    title: str
    description: str
    summary: str
    organization: str
    visibility: str
    scopes: tuple[str, ...]
    categories: tuple[str, ...]
    blocks: tuple[dict[str, str | bool], ...]
    external_links: tuple[dict[str, str], ...]
    configurations: dict[str, dict[str, Any]]
    target: str
    script: Asset | None
    icon: Asset | None
    preview_images: tuple[Asset, ...]
    secrets: dict[str, str] = field(repr=False)
    raw: dict[str, Any] = field(repr=False)
    envs: dict[str, Any] = field(repr=False)
    content_security_policy: dict[str, str] | str | None = None
    code: CodeBundle | None = field(default=None, repr=False)  # the script and modules beside it
    network_fetch: tuple[str, ...] | None = None  # hosts besides the API; None: not declared


@dataclass
class CheckResult:
    """Every problem found; ``manifest`` is set only when there is no error."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    manifest: Manifest | None = None

    @property
    def ok(self) -> bool:
        return not self.errors
