"""Outbound HTTP that cannot be turned against the platform's own network (SSRF).

A URL must be http or https; its host is resolved once, every address it resolves to must be
public (not loopback, private, link-local, CGNAT, multicast, reserved or an IPv4-mapped
private address) unless it lies in ``settings.WEBHOOK_ALLOWED_NETWORKS``; the connection is
then made to the address that was checked (the host name still goes in the Host header, and
in TLS for SNI and certificate checks), so a second DNS answer cannot slip in. Redirects are
never followed and proxies from the environment are ignored.
"""

import functools
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from django.conf import settings


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


class SendError(Exception):
    """The request got no HTTP response: a network error or a timeout; the message says."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict
    body_start: bytes  # the first bytes of the (decoded) body, as many as were asked for


@functools.cache
def _pools() -> urllib3.PoolManager:
    """Keep-alive connection pools, one per (scheme, checked address, port, TLS host name),
    shared by the threads of a process; each keeps as many connections as POSTs can be in
    flight (``WEBHOOK_SENDERS``), so a burst to one receiver reuses its connections instead of
    opening and dropping new ones. urllib3 directly: a POST costs a third of requests' CPU."""
    return urllib3.PoolManager(
        num_pools=256,
        maxsize=settings.WEBHOOK_SENDERS,
        block=False,
        retries=False,
        ca_certs=certifi.where(),
    )


#: Beyond this many unread body bytes a connection is closed rather than drained for reuse.
_DRAIN_LIMIT = 64 * 1024


def post(target: Target, *, body: bytes, headers: dict, keep: int) -> Response:
    """POST ``body`` to the checked target's address, reading the first ``keep`` bytes of the
    answer. 3 s to connect and 10 s in all (``settings.WEBHOOK_CONNECT_TIMEOUT`` and
    ``WEBHOOK_RESPONSE_TIMEOUT``); no redirect followed. Raises SendError."""
    pool_kwargs = {"server_hostname": target.host, "assert_hostname": target.host}
    pool = _pools().connection_from_host(
        target.address,
        target.port,
        target.scheme,
        pool_kwargs=pool_kwargs if target.scheme == "https" else None,
    )
    timeout = urllib3.Timeout(
        total=settings.WEBHOOK_RESPONSE_TIMEOUT, connect=settings.WEBHOOK_CONNECT_TIMEOUT
    )
    path = urlsplit(target.url)
    try:
        response = pool.urlopen(
            "POST",
            (path.path or "/") + (f"?{path.query}" if path.query else ""),
            body=body,
            headers={**headers, "Host": _host_header(target)},
            redirect=False,
            retries=False,
            timeout=timeout,
            preload_content=False,
        )
    except urllib3.exceptions.NewConnectionError as exc:  # a ConnectTimeoutError in urllib3 2
        raise SendError(f"network error: {_reason(exc)}") from exc
    except urllib3.exceptions.TimeoutError as exc:
        raise SendError(f"timeout: {exc.__class__.__name__}") from exc
    except urllib3.exceptions.HTTPError as exc:
        raise SendError(f"network error: {_reason(exc)}") from exc
    try:
        body_start = response.read(keep, decode_content=True) or b""
        remaining = response.length_remaining
        if remaining is not None and remaining <= _DRAIN_LIMIT:
            response.drain_conn()
            response.release_conn()
        else:
            response.close()
    except (urllib3.exceptions.HTTPError, OSError):  # a receiver that breaks off its body
        body_start = b""
        response.close()
    return Response(status=response.status, headers=dict(response.headers), body_start=body_start)


def _host_header(target: Target) -> str:
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    return host if target.port == default_port else f"{host}:{target.port}"


def _reason(exc: Exception) -> str:
    """The cause of a network error without urllib3's connection repr."""
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    message = str(exc)
    return message.split(": ", 1)[1] if message.startswith("HTTP") and ": " in message else message
