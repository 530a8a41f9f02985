"""Which network addresses code may be made to reach: public ones only (not loopback, private,
link-local, CGNAT, multicast, reserved, unspecified, nor such an address wrapped as
IPv4-mapped, 6to4, Teredo or NAT64), unless in networks an operator allowed. The one rule of
every outbound guard: webhook deliveries and integration code's ``context.fetch`` (the runtime
host's ``outbound``), and the repositories Git sync dials (the platform's ``gitsync.work``).

Pure Python (standard library): the runtime host and the platform both import it.
"""

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 forms that carry an IPv4 address the peer ends up reaching.
_6TO4 = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def parse_networks(cidrs: Iterable[str]) -> list[Network]:
    """CIDRs as networks; ValueError naming the one that is not a network."""
    networks = []
    for cidr in cidrs:
        if cidr.strip():
            try:
                networks.append(ipaddress.ip_network(cidr.strip(), strict=False))
            except ValueError:
                raise ValueError(f"{cidr.strip()!r} is not a network (CIDR)") from None
    return networks


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _6TO4:
        return "6to4", ipaddress.IPv4Address(address.packed[2:6])
    if address in _TEREDO:  # the client's address, obfuscated in the last 32 bits
        return "Teredo", ipaddress.IPv4Address(bytes(b ^ 0xFF for b in address.packed[12:16]))
    if address in _NAT64 or address in _NAT64_LOCAL:
        return "NAT64", ipaddress.IPv4Address(address.packed[12:16])
    return None


def _with_article(noun: str) -> str:
    return ("an " if noun[0] in "aeiouIN" and not noun.startswith("NAT") else "a ") + noun


def address_refusal(address: Address) -> str | None:
    """Why an address may not be called ("a loopback address"), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            form, inner = embedded
            reason = address_refusal(inner)
            if reason:
                return f"{_with_article(form)} form of {reason}"
            if form in ("6to4", "Teredo"):  # relayed to an address nobody checked
                return _with_article(f"{form} relay address")
            return None
    for label, test in [
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("unspecified", address.is_unspecified),
    ]:
        if test:
            return _with_article(f"{label} address")
    if not address.is_global:
        return "a non-public address"
    return None
