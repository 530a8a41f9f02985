"""Outbound HTTP that cannot be turned against the platform's own network (SSRF): the one
guard of webhook deliveries, of integration code's ``context.fetch`` (DESIGN.md) and of the
OpenAPI documents the platform fetches from a URL (``docplatform.openapi.fetching``).

A URL must be http or https without credentials; its host is resolved once and every address
must be public (not loopback, private, link-local, CGNAT, multicast, reserved, unspecified,
nor such an address wrapped as IPv4-mapped, 6to4, Teredo or NAT64) unless it lies in the
caller's allowed networks. The connection goes to the address that was checked (the host name
still goes in the Host header and in TLS), redirects are never followed, proxies from the
environment are ignored, and an attempt ends at an absolute deadline whatever the peer does:
``DeadlineSocket`` gives every send and receive only the time left, so a receiver that drips
its headers or body a byte at a time is cut when the deadline passes.

Pure Python (standard library and urllib3): the runtime host and the platform both import it
(as they do ``addresses``), so no Django here.
"""

import contextlib
import io
import ipaddress
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .addresses import Address, Network, address_refusal


class UnsafeURL(Exception):
    """The URL may not be called; the message says why."""


class SendError(Exception):
    """The request got no HTTP response: a network error or a timeout; the message says."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int
    address: str

    @property
    def request_path(self) -> str:
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    @property
    def host_header(self) -> str:
        default_port = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default_port else f"{host}:{self.port}"


@dataclass(frozen=True)
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes  # at most the bytes asked for, decoded
    truncated: bool = False


def check_url(
    url: str, *, allowed_networks: Iterable[Network] = (), allowed_by: str = ""
) -> Target:
    """Resolve and check ``url``; raises UnsafeURL with a reason a person can act on.
    ``allowed_by``: the operator's setting that lists ``allowed_networks``, named when an
    address is refused (the one thing that would let it through)."""
    if not isinstance(url, str) or not url.strip():
        raise UnsafeURL("give an http or https URL")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeURL(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL("only http and https URLs may be called")
    if not parts.hostname:
        raise UnsafeURL("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeURL("credentials in the URL are not allowed")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeURL(f"the host {parts.hostname} does not resolve ({exc})") from None
    addresses: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if address not in addresses:
            addresses.append(address)
    allowed = list(allowed_networks)
    for address in addresses:
        if any(address in network for network in allowed):
            continue
        reason = address_refusal(address)
        if reason:
            hint = f" (an operator may allow its network with {allowed_by})" if allowed_by else ""
            raise UnsafeURL(f"{parts.hostname} resolves to {address}, {reason}{hint}")
    return Target(
        url=url.strip(),
        scheme=parts.scheme,
        host=parts.hostname,
        port=port,
        address=str(addresses[0]),
    )


# --- the absolute deadline --------------------------------------------------------------------

_current = threading.local()


@contextlib.contextmanager
def deadline(seconds: float):
    """Within this block, every socket made here ends its sends and receives by ``seconds``
    from now (per thread)."""
    previous = getattr(_current, "deadline", None)
    _current.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _current.deadline = previous


def _time_left() -> float | None:
    end = getattr(_current, "deadline", None)
    if end is None:
        return None
    left = end - time.monotonic()
    if left <= 0:
        raise TimeoutError("the attempt ran over its deadline")
    return left


class DeadlineSocket:
    """A connected socket (plain or TLS) whose every send and receive gets at most the time
    left before the thread's deadline, on top of its own timeout."""

    def __init__(self, sock):
        self._sock = sock
        self._timeout = sock.gettimeout()

    def _arm(self):
        left = _time_left()
        if left is None:
            self._sock.settimeout(self._timeout)
        elif self._timeout is None:
            self._sock.settimeout(left)
        else:
            self._sock.settimeout(min(left, self._timeout))

    def recv_into(self, buffer, nbytes=0, flags=0):
        self._arm()
        return self._sock.recv_into(buffer, nbytes, flags)

    def recv(self, size, flags=0):
        self._arm()
        return self._sock.recv(size, flags)

    def send(self, data, flags=0):
        self._arm()
        return self._sock.send(data, flags)

    def sendall(self, data, flags=0):
        view = memoryview(data)
        while view:
            view = view[self.send(view, flags) :]

    def settimeout(self, value):
        self._timeout = value
        self._sock.settimeout(value)

    def gettimeout(self):
        return self._timeout

    def makefile(self, mode="r", buffering=None, **_):
        """A file over this wrapper (so reads keep to the deadline) that, like the socket's
        own, keeps the descriptor open until it is closed too."""
        raw = socket.SocketIO(self, mode.replace("b", ""))
        self._sock._io_refs += 1
        if "r" in mode:
            return io.BufferedReader(raw, buffering or io.DEFAULT_BUFFER_SIZE)
        return io.BufferedWriter(raw, buffering or io.DEFAULT_BUFFER_SIZE)

    def _decref_socketios(self):
        self._sock._decref_socketios()

    def __getattr__(self, name):
        return getattr(self._sock, name)


class _DeadlineHTTPConnection(HTTPConnection):
    def connect(self):
        super().connect()
        self.sock = DeadlineSocket(self.sock)


class _DeadlineHTTPSConnection(HTTPSConnection):
    def connect(self):
        super().connect()
        self.sock = DeadlineSocket(self.sock)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


def pool_manager(connections_per_host: int = 1) -> urllib3.PoolManager:
    """Connection pools whose connections keep to the thread's deadline; retries and
    redirects off; certificates checked against certifi's bundle."""
    manager = urllib3.PoolManager(
        num_pools=256,
        maxsize=connections_per_host,
        block=False,
        retries=False,
        ca_certs=certifi.where(),
    )
    manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return manager


#: Beyond this many unread body bytes a connection is closed rather than drained for reuse.
_DRAIN_LIMIT = 64 * 1024


def request(
    pools: urllib3.PoolManager,
    target: Target,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict | None = None,
    keep: int,
    connect_timeout: float = 3,
    total_timeout: float = 10,
) -> Response:
    """Send one request to the checked target's address and read at most ``keep`` bytes of
    the answer, all within ``connect_timeout`` to connect and ``total_timeout`` in all (an
    absolute deadline); no redirect followed. Raises SendError."""
    pool = pools.connection_from_host(
        target.address,
        target.port,
        target.scheme,
        pool_kwargs={"server_hostname": target.host, "assert_hostname": target.host}
        if target.scheme == "https"
        else None,
    )
    connect_timeout = min(connect_timeout, total_timeout)
    timeout = urllib3.Timeout(connect=connect_timeout, read=total_timeout)
    with deadline(total_timeout):
        try:
            response = pool.urlopen(
                method,
                target.request_path,
                body=body,
                headers={**(headers or {}), "Host": target.host_header},
                redirect=False,
                retries=False,
                timeout=timeout,
                preload_content=False,
            )
        except urllib3.exceptions.NewConnectionError as exc:
            raise SendError(f"network error: {_reason(exc)}") from exc
        except urllib3.exceptions.ConnectTimeoutError as exc:
            raise SendError(f"timeout: no connection within {connect_timeout:g} s") from exc
        except (urllib3.exceptions.TimeoutError, TimeoutError) as exc:
            raise SendError(f"timeout: no answer within {total_timeout:g} s") from exc
        except urllib3.exceptions.ProtocolError as exc:
            if isinstance(exc.__context__, TimeoutError) or _deadline_passed():
                raise SendError(f"timeout: no answer within {total_timeout:g} s") from exc
            raise SendError(f"network error: {_reason(exc)}") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise SendError(f"network error: {_reason(exc)}") from exc
        truncated = False
        try:
            kept = response.read(keep, decode_content=True) or b""
            remaining = response.length_remaining
            if remaining == 0 or (remaining is not None and remaining <= _DRAIN_LIMIT):
                response.drain_conn()
                response.release_conn()
            else:
                truncated = remaining is None or remaining > 0
                response.close()
        except (urllib3.exceptions.HTTPError, OSError):  # a body broken off or cut at the deadline
            truncated = True
            kept = b""
            response.close()
    return Response(
        status=response.status,
        headers=list(response.headers.items()),
        body=kept,
        truncated=truncated,
    )


def _deadline_passed() -> bool:
    try:
        _time_left()
    except TimeoutError:
        return True
    return False


def _reason(exc: Exception) -> str:
    """The cause of a network error without urllib3's connection repr."""
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    message = str(exc)
    return message.split(": ", 1)[1] if message.startswith("HTTP") and ": " in message else message
