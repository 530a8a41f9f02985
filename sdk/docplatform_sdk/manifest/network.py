"""The ``network`` key (an extension, DESIGN.md): ``network: {fetch: [host, "*.host", ...]}``,
the hosts ``context.fetch`` may reach. Absent means any public host."""

import re
from typing import Any

NETWORK_KEYS = ("fetch",)
MAX_FETCH_HOSTS = 50
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
HOST_PATTERN_RE = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")


def host_pattern_problem(pattern: Any) -> str | None:
    """Why ``pattern`` is not a host name or ``*.`` wildcard, or None when it is one."""
    if not isinstance(pattern, str):
        return f"must be a host name such as 'api.example.com' or '*.example.com', not {pattern!r}"
    if pattern != pattern.strip().lower():
        return f"write host names in lower case without spaces: {pattern.strip().lower()!r}"
    if "://" in pattern or "/" in pattern or ":" in pattern:
        return f"a host name only, without scheme, port or path: {pattern!r}"
    if len(pattern) > 253 or not HOST_PATTERN_RE.fullmatch(pattern):
        return f"{pattern!r} is not a host name ('*.' may only start it)"
    return None


def host_allowed(host: str, patterns) -> bool:
    """Whether ``host`` matches one of the patterns (``*.x.com`` matches ``a.x.com`` and
    ``b.a.x.com``, not ``x.com``)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False
