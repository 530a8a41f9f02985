"""``scopes``: known scopes, each once; internal ones only for an internal organization."""

from __future__ import annotations

from typing import Any

from .base import CheckerBase, hint, index, shown
from .constants import INTERNAL_SCOPES, SCOPES


class ScopeChecks(CheckerBase):
    def check_scopes(self, value: Any, path: str) -> tuple[str, ...] | None:
        items = self.sequence(value, path, "a list of scopes")
        if items is None:
            return None
        scopes: list[str] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            scope = self.string(item, where)
            if scope is None:
                ok = False
            elif scope not in SCOPES:
                ok = False
                self.error(where, f"unknown scope {shown(scope)}{hint(scope, SCOPES)}")
            elif scope in first:
                ok = False
                self.error(
                    where, f"{scope!r} is listed twice (also at {index(path, first[scope])})"
                )
            elif scope in INTERNAL_SCOPES and not self.is_internal():
                ok = False
                first[scope] = position
                self.error(
                    where,
                    f"{scope!r} is reserved for internal platform use; only integrations of "
                    "an internal organization may request it",
                )
            else:
                first[scope] = position
                scopes.append(scope)
        return tuple(scopes) if ok else None
