"""The ``network`` key (an extension, DESIGN.md): ``network: {fetch: [host, "*.host", ...]}``,
the hosts integration code may call besides the platform's API. ``["*"]`` means any public
host; no ``network.fetch`` means none (only the platform's API), as an empty list does.

``host_allowed`` is the one rule the runtime's egress broker applies, and
``how_to_declare`` the one hint the checker and the broker's refusals give."""

import re
from typing import Any

NETWORK_KEYS = ("fetch",)
MAX_FETCH_HOSTS = 50
ANY_PUBLIC_HOST = "*"
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
HOST_PATTERN_RE = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")


def host_pattern_problem(pattern: Any) -> str | None:
    """Why ``pattern`` is not ``"*"``, a host name or a ``*.`` wildcard, or None when it is."""
    if pattern == ANY_PUBLIC_HOST:
        return None
    if not isinstance(pattern, str):
        return f"must be a host name such as 'api.example.com' or '*.example.com', not {pattern!r}"
    if pattern != pattern.strip().lower():
        return f"write host names in lower case without spaces: {pattern.strip().lower()!r}"
    if "://" in pattern or "/" in pattern or ":" in pattern:
        return f"a host name only, without scheme, port or path: {pattern!r}"
    if len(pattern) > 253 or not HOST_PATTERN_RE.fullmatch(pattern):
        return (
            f"{pattern!r} is not a host name ('*.' may only start it; '*' alone means any "
            "public host)"
        )
    return None


def host_allowed(host: str, patterns) -> bool:
    """Whether integration code may call ``host``, given its manifest's ``network.fetch``
    (``None`` when it declares none: no host). ``*`` matches any host; ``*.x.com`` matches
    ``a.x.com`` and ``b.a.x.com``, not ``x.com``."""
    host = host.lower().rstrip(".")
    for pattern in patterns or ():
        if pattern == ANY_PUBLIC_HOST:
            return True
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def how_to_declare(host: str = "api.example.com") -> str:
    """How to let integration code call ``host``."""
    return f'network.fetch: ["{host}"] (or ["{ANY_PUBLIC_HOST}"] for any public host)'
