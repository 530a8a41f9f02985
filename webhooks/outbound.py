"""Outbound HTTP that cannot be turned against the platform's own network (SSRF).

A URL must be http or https; its host is resolved once, every address it resolves to must be
public (not loopback, private, link-local, CGNAT, multicast, reserved or an IPv4-mapped
private address) unless it lies in ``settings.WEBHOOK_ALLOWED_NETWORKS``; the connection is
then made to the address that was checked (the host name still goes in the Host header, and
in TLS for SNI and certificate checks), so a second DNS answer cannot slip in. Redirects are
never followed and proxies from the environment are ignored.
"""

import ipaddress
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter


class UnsafeURL(Exception):
    """The URL may not be called; the message says why."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int
    address: str


def allowed_networks():
    return [ipaddress.ip_network(cidr.strip(), strict=False) for cidr in _allowed_cidrs()]


def _allowed_cidrs():
    return [cidr for cidr in settings.WEBHOOK_ALLOWED_NETWORKS if cidr.strip()]


def _refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address may not be called, or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        mapped = _refusal(address.ipv4_mapped)
        return f"an IPv4-mapped {mapped}" if mapped else None
    for label, test in [
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("unspecified", address.is_unspecified),
    ]:
        if test:
            return f"{label} address"
    if not address.is_global:
        return "non-public address"
    return None


def check_url(url: str) -> Target:
    """Resolve and check ``url``; raises UnsafeURL with a reason a person can act on."""
    if not isinstance(url, str) or not url.strip():
        raise UnsafeURL("give an http or https URL")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeURL(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL("only http and https URLs can receive webhooks")
    if not parts.hostname:
        raise UnsafeURL("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeURL("credentials in the URL are not allowed")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeURL(f"the host {parts.hostname} does not resolve ({exc})") from None
    addresses = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if address not in addresses:
            addresses.append(address)
    allowed = allowed_networks()
    for address in addresses:
        if any(address in network for network in allowed):
            continue
        reason = _refusal(address)
        if reason:
            raise UnsafeURL(f"{parts.hostname} resolves to {address}, a {reason}")
    return Target(
        url=url.strip(),
        scheme=parts.scheme,
        host=parts.hostname,
        port=port,
        address=str(addresses[0]),
    )


class PinnedAddressAdapter(HTTPAdapter):
    """Connects to the checked address of the request's Target, whatever DNS says now."""

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        target: Target = request.pinned_target
        host_params["host"] = target.address
        if target.scheme == "https":
            pool_kwargs["server_hostname"] = target.host
            pool_kwargs["assert_hostname"] = target.host
        return host_params, pool_kwargs


_local = threading.local()


def _session() -> requests.Session:
    """One keep-alive session per thread: connections are reused between deliveries."""
    session = getattr(_local, "session", None)
    if session is None:
        session = requests.Session()
        session.trust_env = False  # never a proxy from the environment
        adapter = PinnedAddressAdapter(pool_connections=64, pool_maxsize=8)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        _local.session = session
    return session


def post(target: Target, *, body: bytes, headers: dict, timeout) -> requests.Response:
    """POST ``body`` to the checked target. Network errors raise requests' exceptions."""
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    if ":" in target.host and target.port == default_port:
        host_header = f"[{target.host}]"
    elif ":" in target.host:
        host_header = f"[{target.host}]:{target.port}"
    request = requests.Request(
        "POST", target.url, data=body, headers={**headers, "Host": host_header}
    ).prepare()
    request.pinned_target = target
    return _session().send(request, timeout=timeout, allow_redirects=False, stream=True)
