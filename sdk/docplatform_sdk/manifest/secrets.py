"""``secrets`` (resolved from ``${{ env.NAME }}`` placeholders, never shown in a message) and
``envs`` (per-environment overrides of top-level keys); ``redact`` keeps secret values out
of the stored manifest.
"""

from __future__ import annotations

import copy
from typing import Any

from .base import (
    ENV_NAME_RE,
    ENV_PLACEHOLDER_RE,
    EXPRESSION_RE,
    IDENTIFIER_RE,
    REDACTED,
    CheckerBase,
    join,
)
from .constants import MAX_SECRET_BYTES, TOP_LEVEL_KEYS


class SecretChecks(CheckerBase):
    def check_secrets(self, value: Any, path: str) -> dict[str, str] | None:
        secrets = self.mapping(value, path, "a mapping of secret names to values")
        if secrets is None:
            return None
        resolved: dict[str, str] = {}
        before = len(self.errors)
        for name, secret in secrets.items():
            where = join(path, name)
            if not isinstance(name, str) or not IDENTIFIER_RE.fullmatch(name):
                self.error(
                    where,
                    "a secret name must be letters, digits and underscores, not starting with "
                    "a digit, such as CLIENT_ID",
                )
                continue
            if not isinstance(secret, str):
                # never echo the value: it may be a secret
                self.wrong_type(where, "a string", secret)
                continue
            result = self.secret(secret, where)
            if result is not None:
                resolved[name] = result
        return resolved if len(self.errors) == before else None

    def secret(self, value: str, path: str) -> str | None:
        expression = EXPRESSION_RE.search(value)
        if self.env is None:
            if expression is not None or "${{" in value:
                shown_expression = expression.group(0) if expression else "${{ ... }}"
                self.error(
                    path,
                    f"the placeholder {shown_expression} must be resolved before upload: send "
                    "the secret's value itself",
                )
                return None
            return self._sized(value, path, "the value")
        placeholder = ENV_PLACEHOLDER_RE.fullmatch(value)
        if placeholder is not None:
            variable = placeholder.group(1)
            if variable not in self.env:
                self.error(path, f"environment variable {variable} is not set")
                return None
            resolved = self.env[variable]
            if not isinstance(resolved, str):
                self.error(path, f"environment variable {variable} does not hold text")
                return None
            if resolved == "":
                self.warn(path, f"environment variable {variable} is empty")
            return self._sized(resolved, path, f"environment variable {variable}")
        if expression is not None or "${{" in value:
            shown_expression = expression.group(0) if expression else "${{ ... }}"
            self.error(
                path,
                f"unsupported expression {shown_expression}: only ${{{{ env.NAME }}}} is "
                "supported; resolve other references (such as op:// ones) before checking",
            )
            return None
        return self._sized(value, path, "the value")

    def _sized(self, value: str, path: str, what: str) -> str | None:
        if len(value.encode("utf-8", "surrogatepass")) > MAX_SECRET_BYTES:
            self.error(path, f"{what} is longer than {MAX_SECRET_BYTES // 1024} KiB")
            return None
        return value

    def check_envs(self, value: Any, path: str) -> dict | None:
        envs = self.mapping(value, path, "a mapping of environment names to manifest keys")
        if envs is None:
            return None
        before = len(self.errors)
        allowed = tuple(key for key in TOP_LEVEL_KEYS if key != "envs")
        for name, overrides in envs.items():
            where = join(path, name)
            if not isinstance(name, str) or not ENV_NAME_RE.fullmatch(name):
                self.error(
                    where,
                    "an environment name must be letters, digits, '-', '_' or '.', such as "
                    "'staging'",
                )
                continue
            overrides = self.mapping(overrides, where, "a mapping of manifest keys")
            if overrides is None:
                continue
            for key, override in overrides.items():
                if key == "envs":
                    self.error(join(where, key), "environments cannot be nested")
                elif key not in allowed:
                    self.unknown_key(join(where, key), key, allowed)
                else:
                    self.plain_data(override, join(where, key))
        return envs if len(self.errors) == before else None


def _redact_secrets(secrets: Any) -> Any:
    if not isinstance(secrets, dict):
        return secrets
    return {
        name: value
        if isinstance(value, str) and EXPRESSION_RE.fullmatch(value.strip())
        else REDACTED
        for name, value in secrets.items()
    }


def redact(document: dict) -> dict:
    """A deep copy of the document with every secret value replaced (placeholders kept)."""
    raw = copy.deepcopy(document)
    if "secrets" in raw:
        raw["secrets"] = _redact_secrets(raw["secrets"])
    envs = raw.get("envs")
    if isinstance(envs, dict):
        for overrides in envs.values():
            if isinstance(overrides, dict) and "secrets" in overrides:
                overrides["secrets"] = _redact_secrets(overrides["secrets"])
    return raw
