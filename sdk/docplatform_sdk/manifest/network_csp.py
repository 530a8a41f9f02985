"""What an integration may reach: ``network`` (the hosts its code may fetch) and
``contentSecurityPolicy``.
"""

from __future__ import annotations

from typing import Any

from . import network as network_rules
from .base import CheckerBase, hint, index, join
from .constants import CSP_DIRECTIVES


class NetworkChecks(CheckerBase):
    def check_network(self, value: Any, path: str) -> dict | None:
        network = self.mapping(value, path, "a mapping with fetch: [host names]")
        if network is None:
            return None
        before = len(self.errors)
        self.keys(network, path, network_rules.NETWORK_KEYS, ())
        hosts = self.sequence(network.get("fetch", []), join(path, "fetch"), "a list of hosts")
        if hosts is not None:
            if len(hosts) > network_rules.MAX_FETCH_HOSTS:
                self.error(join(path, "fetch"), f"at most {network_rules.MAX_FETCH_HOSTS} hosts")
            for position, host in enumerate(hosts):
                problem = network_rules.host_pattern_problem(host)
                if problem:
                    self.error(index(join(path, "fetch"), position), problem)
            if network_rules.ANY_PUBLIC_HOST in hosts and len(hosts) > 1:
                self.error(join(path, "fetch"), "'*' already means any public host: list it alone")
        if len(self.errors) != before:
            return None
        return {"fetch": tuple(dict.fromkeys(network.get("fetch", [])))}

    def warn_fetch_undeclared(self, document: dict) -> None:
        """A script without ``network.fetch`` may call only the platform's API: say so, and
        how to declare the hosts it calls."""
        network = document.get("network", {})
        if "script" not in document or not isinstance(network, dict) or "fetch" in network:
            return
        self.warn(
            "network.fetch",
            "not declared, so the code may call only this platform's API; to call other "
            f"hosts, declare them: {network_rules.how_to_declare()}; "
            "network.fetch: [] says it calls none",
        )

    def check_contentSecurityPolicy(self, value: Any, path: str) -> dict | str | None:
        if isinstance(value, str):
            return value
        policy = self.mapping(value, path, "a string or a mapping of CSP directives to sources")
        if policy is None:
            return None
        before = len(self.errors)
        for directive, sources in policy.items():
            where = join(path, directive)
            if directive not in CSP_DIRECTIVES:
                suggestion = hint(directive, CSP_DIRECTIVES)
                self.error(
                    where,
                    f"unknown Content-Security-Policy directive{suggestion}"
                    if suggestion
                    else "unknown Content-Security-Policy directive",
                )
                continue
            self.string(sources, where, allow_empty=True)
        return dict(policy) if len(self.errors) == before else None
