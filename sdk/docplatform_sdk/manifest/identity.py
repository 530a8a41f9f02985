"""The identity and listing fields: name, title, description, summary, organization,
visibility, target and categories.
"""

from __future__ import annotations

from typing import Any

from .base import NAME_RE, ORGANIZATION_RE, CheckerBase, hint, index, one_of, shown
from .constants import (
    CATEGORIES,
    CATEGORY_ALIASES,
    MAX_DESCRIPTION_LENGTH,
    MAX_NAME_LENGTH,
    MAX_ORGANIZATION_LENGTH,
    MAX_SUMMARY_LENGTH,
    MAX_TITLE_LENGTH,
    TARGETS,
    VISIBILITIES,
)


class IdentityChecks(CheckerBase):
    def check_name(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_NAME_LENGTH)
        if text is not None and not NAME_RE.fullmatch(text):
            suggestion = ""
            if NAME_RE.fullmatch(text.lower()):
                suggestion = f"; did you mean {text.lower()!r}?"
            self.error(
                path,
                "must be lower-case letters and digits in words joined by single hyphens, "
                f"such as 'my-integration'; found {shown(text)}{suggestion}",
            )
            return None
        return text

    def check_title(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_TITLE_LENGTH)

    def check_description(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_DESCRIPTION_LENGTH)

    def check_summary(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_SUMMARY_LENGTH, allow_empty=True)

    def check_organization(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_ORGANIZATION_LENGTH)
        if text is not None and not ORGANIZATION_RE.fullmatch(text):
            self.error(
                path,
                "must be an organization id or subdomain (letters, digits and hyphens); "
                f"found {shown(text)}",
            )
            return None
        return text

    def check_visibility(self, value: Any, path: str) -> str | None:
        return self.choice(value, path, VISIBILITIES)

    def check_target(self, value: Any, path: str) -> str | None:
        return self.choice(value, path, TARGETS)

    def check_categories(self, value: Any, path: str) -> tuple[str, ...] | None:
        items = self.sequence(value, path, "a list of categories")
        if items is None:
            return None
        categories: list[str] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            category = self.string(item, where)
            if category is None:
                ok = False
            elif category not in CATEGORIES:
                ok = False
                suggestion = hint(category, CATEGORIES, CATEGORY_ALIASES)
                self.error(
                    where,
                    f"unknown category {shown(category)}{suggestion or ''}"
                    + ("" if suggestion else f"; the categories are {one_of(CATEGORIES)}"),
                )
            elif category in first:
                ok = False
                self.error(
                    where, f"{category!r} is listed twice (also at {index(path, first[category])})"
                )
            else:
                first[category] = position
                categories.append(category)
        return tuple(categories) if ok else None
