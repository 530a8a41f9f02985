"""The runtime's framing: the platform's calls to the runtime host over persistent
connections (``RUNTIME_URL`` ``unix:///path`` on one machine, ``tcp://host:port`` across
machines), each frame with its call id: the host takes many calls at once on a connection and
answers each as it is ready; the platform keeps one per host and thread (``Connection``). No
HTTP server in the path: the host's event loop (``socket_server.py``) reads frames and hands
them to the same dispatch its HTTP application calls.

On connecting, the host says ``HELLO`` and a random nonce of its own for this connection.
Then every frame is a 4-byte big-endian length and that many bytes:

request   call id (u32), sequence (u64), timestamp (u64, Unix milliseconds), a MAC (32 bytes:
          HMAC-SHA256 with the platform-to-runtime key over the connection's nonce and the
          rest of the frame), then its fields.
answer    call id (u32), status (u16), then its fields.

Fields: a count (u8), then each as its length (u32; ``ABSENT`` for a field not given) and
its bytes. A request's are ``REQUEST_FIELDS`` by position (the HTTP path, the trace context,
the envelope's parts, or the body of ``/inspect``); an answer's are its headers (a JSON list
of pairs, the protocol's ``X-Runtime-*`` among them) and its body.

What the host trusts: a request whose MAC matches one of its keys, whose timestamp is within
the signature tolerance, and whose sequence is above every earlier one of its connection. A
frame captured from one connection does not verify on another (the host's nonce differs) nor
again on its own (its sequence was used): a forged or replayed frame is answered 401 and the
connection closed; a frame over the host's size limit is answered 413 and skipped.

Pure Python, the standard library alone: both the host and the platform's gateway use it.
"""

import contextlib
import hashlib
import hmac
import itertools
import json
import math
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

#: What the host says first on every connection, followed by its nonce.
HELLO = b"DPRT1"
NONCE_BYTES = 16
LENGTH = struct.Struct("!I")
REQUEST_HEAD = struct.Struct("!IQQ32s")  # call id, sequence, timestamp ms, MAC
ANSWER_HEAD = struct.Struct("!IH")  # call id, status
FIELD_LENGTH = struct.Struct("!I")
ABSENT = 0xFFFFFFFF
MAC_OFFSET = 4 + 8 + 8  # the MAC follows the call id, the sequence and the timestamp

#: A request's fields, by position.
PATH, TRACEPARENT, TRACESTATE, EVENT, ENVIRONMENT, FETCH_BODY, BUNDLE, BODY = range(8)
REQUEST_FIELDS = 8
#: Room for an answer's headers (what the code printed, its error) beside its body's limit.
ANSWER_HEADROOM = 1024 * 1024
#: Bytes read from a connection at a time.
CHUNK = 256 * 1024
#: The schemes of ``RUNTIME_URL`` spoken in frames; ``http://`` is HTTP.
SCHEMES = ("unix", "tcp")


class FrameError(Exception):
    """The connection's bytes are not frames: it cannot be used further."""


class ConnectFailed(FrameError):
    """No connection was made (refused, no socket, not in time): nothing reached the host."""


class ConnectionBroken(FrameError):
    """The connection ended before the call's answer: the call may have reached the host."""


class AnswerTimeout(FrameError):
    """No answer within the time given: the call may have reached the host."""


class AnswerTooLarge(Exception):
    """The answer's frame is over the limit the caller gave (its bytes were skipped)."""


class Refused(Exception):
    """A request the host does not trust; ``status`` and ``body`` are its answer."""

    def __init__(self, call_id: int, status: int, body: dict, *, close: bool):
        super().__init__(body.get("message") or body["error"])
        self.call_id, self.status, self.body, self.close = call_id, status, body, close


def _fields(values: Iterable[bytes | None]) -> bytes:
    values = list(values)
    out = [bytes([len(values)])]
    for value in values:
        if value is None:
            out.append(FIELD_LENGTH.pack(ABSENT))
        else:
            out.append(FIELD_LENGTH.pack(len(value)))
            out.append(value)
    return b"".join(out)


def _read_fields(data: memoryview, offset: int) -> list[bytes | None]:
    if offset >= len(data):
        raise FrameError("a frame without its fields")
    count, offset = data[offset], offset + 1
    values: list[bytes | None] = []
    for _ in range(count):
        if offset + 4 > len(data):
            raise FrameError("a field's length past the frame's end")
        (size,) = FIELD_LENGTH.unpack_from(data, offset)
        offset += 4
        if size == ABSENT:
            values.append(None)
            continue
        if offset + size > len(data):
            raise FrameError("a field past the frame's end")
        values.append(bytes(data[offset : offset + size]))
        offset += size
    if offset != len(data):
        raise FrameError("bytes after a frame's last field")
    return values


def _mac(key: bytes, nonce: bytes, head: bytes, fields: bytes) -> bytes:
    digest = hmac.new(key, nonce, hashlib.sha256)
    digest.update(head)
    digest.update(fields)
    return digest.digest()


def encode_request(
    call_id: int, sequence: int, nonce: bytes, key: bytes, fields: list[bytes | None], now=None
) -> bytes:
    """A request frame, its length first, signed with ``key`` for the connection of ``nonce``."""
    timestamp = int((time.time() if now is None else now) * 1000)
    head = struct.pack("!IQQ", call_id, sequence, timestamp)
    body = _fields(fields)
    mac = _mac(key, nonce, head, body)
    return LENGTH.pack(len(head) + len(mac) + len(body)) + head + mac + body


def encode_answer(call_id: int, status: int, headers: list[tuple[str, str]], body: bytes) -> bytes:
    fields = _fields((json.dumps(headers).encode(), body))
    return LENGTH.pack(ANSWER_HEAD.size + len(fields)) + ANSWER_HEAD.pack(call_id, status) + fields


def call_id_of(frame: bytes) -> int:
    """The call id a frame (or its first 4 bytes) names."""
    return struct.unpack_from("!I", frame)[0]


@dataclass(frozen=True)
class Request:
    call_id: int
    fields: list[bytes | None]

    def text(self, position: int) -> str:
        value = self.fields[position]
        return "" if value is None else value.decode("utf-8", "replace")


class Verifier:
    """The host's side of one connection: each request's MAC, timestamp and sequence."""

    def __init__(self, keys: list[str], tolerance: int | None, nonce: bytes):
        self.keys = [key.encode() for key in keys]
        self.tolerance, self.nonce = tolerance, nonce
        self.sequence = 0

    def open(self, frame: bytes) -> Request:
        """The request in ``frame`` (without its length); Refused when it is not trusted."""
        if len(frame) < REQUEST_HEAD.size:
            raise Refused(0, 400, _malformed("a frame shorter than its head"), close=True)
        call_id, sequence, timestamp, mac = REQUEST_HEAD.unpack_from(frame)
        data = memoryview(frame)
        head, body = data[:MAC_OFFSET], data[REQUEST_HEAD.size :]
        if not any(
            hmac.compare_digest(_mac(key, self.nonce, head, body), mac) for key in self.keys
        ):
            raise Refused(call_id, 401, _unsigned("mismatch", "the frame's MAC"), close=True)
        if self.tolerance is not None and abs(time.time() - timestamp / 1000) > self.tolerance:
            age = f"{int(time.time() - timestamp / 1000)} s old (tolerance {self.tolerance} s)"
            raise Refused(call_id, 401, _unsigned("stale", f"the frame is {age}"), close=True)
        if sequence <= self.sequence:
            message = f"sequence {sequence} after {self.sequence}: a replayed frame"
            raise Refused(call_id, 401, _unsigned("replayed", message), close=True)
        self.sequence = sequence
        try:
            fields = _read_fields(data, REQUEST_HEAD.size)
        except FrameError as error:
            raise Refused(call_id, 400, _malformed(str(error)), close=True) from error
        if len(fields) != REQUEST_FIELDS:
            message = f"{len(fields)} fields, not {REQUEST_FIELDS}"
            raise Refused(call_id, 400, _malformed(message), close=True)
        return Request(call_id, fields)


def _unsigned(reason: str, message: str) -> dict:
    return {"error": "invalid_signature", "reason": reason, "message": message}


def _malformed(message: str) -> dict:
    return {"error": "malformed_frame", "message": message}


def too_large(limit: int) -> dict:
    return {"error": "envelope_too_large", "limit": limit, "message": f"over {limit} bytes"}


# --- The platform's side: one connection, many calls -------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def address_of(url: str) -> tuple[int, str | tuple[str, int]]:
    """The socket family and address of a ``unix:///path`` or ``tcp://host:port`` URL."""
    scheme, _, rest = url.partition("://")
    if scheme == "unix":
        return socket.AF_UNIX, rest
    if scheme == "tcp":
        host, _, port = rest.rstrip("/").rpartition(":")
        return socket.AF_INET, (host.strip("[]"), int(port))
    raise ValueError(f"{url!r} is not a unix:// or tcp:// URL")


class Connection:
    """A connection to a runtime host for one thread's calls: ``call`` sends a request and
    reads what comes until its own answer, on the caller's thread (no reader thread, no
    hand-off of the answer from one thread to another: the platform keeps a connection per
    thread, ``gateway.hosts.connection``). Calls from several threads on one connection
    take turns. An answer that comes after its caller stopped waiting is dropped by its call
    id when the next call reads. When the connection ends, the call on it fails
    (ConnectionBroken) and it is not used again (``broken``)."""

    def __init__(self, url: str, key: str, connect_timeout: float):
        family, address = address_of(url)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(connect_timeout)
            sock.connect(address)
            if family == socket.AF_INET:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            hello = _receive(sock, len(HELLO) + NONCE_BYTES)
        except (OSError, FrameError) as error:
            sock.close()
            raise ConnectFailed(f"{url}: {error}") from error
        if not hello.startswith(HELLO):
            sock.close()
            raise ConnectFailed(f"{url} is not a runtime host speaking frames")
        # Blocking, without a timeout: the waits are the poller's (a socket's own timeout
        # polls before each read, and changing it is a system call).
        sock.settimeout(None)
        self.url, self._key, self._nonce = url, key.encode(), hello[len(HELLO) :]
        self._socket = sock
        self._poller = select.poll()
        self._poller.register(sock, select.POLLIN)
        self._buffer = bytearray()
        self._unread = 0  # bytes of a dropped frame still to come
        self._turn = threading.Lock()
        self._ids = itertools.count(1)
        self._sequence = 0
        self.broken = False

    def call(self, fields: list[bytes | None], *, timeout: float, answer_limit: int) -> Answer:
        """Send the request of ``fields`` and wait up to ``timeout`` s for its answer.
        ConnectFailed when the connection was unusable before the request went (nothing
        reached the host), ConnectionBroken or AnswerTimeout when it may have reached it,
        AnswerTooLarge when the answer's frame is over ``answer_limit`` bytes and headroom."""
        with self._turn:
            if not self.broken:
                self._take_in_idle()
            if self.broken:
                raise ConnectFailed(f"{self.url}: the connection had ended")
            call_id = next(self._ids) & 0xFFFFFFFF
            self._sequence += 1
            frame = encode_request(call_id, self._sequence, self._nonce, self._key, fields)
            try:
                self._socket.sendall(frame)
            except OSError as error:
                # Not all of the frame went: the host never runs a frame it did not read whole.
                self._break()
                raise ConnectFailed(f"{self.url}: {error}") from error
            deadline = time.monotonic() + timeout
            try:
                return self._answer(call_id, deadline, answer_limit + ANSWER_HEADROOM)
            except AnswerTimeout:
                raise  # the connection serves on: the late answer is dropped when it comes
            except (OSError, FrameError, ValueError, TypeError) as error:
                self._break()
                raise ConnectionBroken(f"{self.url}: {error}") from error

    def close(self):
        self._break()

    def __del__(self):  # a thread's connections end with it
        with contextlib.suppress(Exception):
            self._socket.close()

    def abandon(self):
        """In a forked child: let go of the parent's connection without ending it (its
        descriptor closed here only)."""
        self.broken = True
        self._socket.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _break(self):
        if self.broken:
            return
        self.broken = True
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()

    def _take_in_idle(self):
        """What came while no call waited, without waiting: a late answer's bytes (dropped
        when read), or the host's end of the connection, found before a frame is sent on it
        (the call then goes on a new connection: nothing reached the host)."""
        try:
            if self._poller.poll(0):
                data = self._socket.recv(CHUNK)
                if not data:
                    self._break()
                self._buffer += data
        except OSError:
            self._break()

    def _read_more(self, deadline: float):
        left = deadline - time.monotonic()
        if left <= 0 or not self._poller.poll(math.ceil(left * 1000)):
            raise AnswerTimeout(f"no answer within the time given ({self.url})")
        self._buffer += _chunk(self._socket)

    def _fill(self, size: int, deadline: float):
        while len(self._buffer) < size:
            self._read_more(deadline)

    def _drop_unread(self, deadline: float):
        """Drop what is left of a frame no call waits for (or one over its caller's limit),
        as it comes: a frame cut by a timeout is dropped on by the next call."""
        buffer = self._buffer
        while self._unread:
            if not buffer:
                self._read_more(deadline)
            dropped = min(self._unread, len(buffer))
            del buffer[:dropped]
            self._unread -= dropped

    def _answer(self, call_id: int, deadline: float, limit: int) -> Answer:
        buffer = self._buffer
        while True:
            self._drop_unread(deadline)
            self._fill(LENGTH.size + ANSWER_HEAD.size, deadline)
            (length,) = LENGTH.unpack_from(buffer)
            answer_id = call_id_of(bytes(buffer[4:8]))
            if answer_id != call_id or length > limit:
                del buffer[: LENGTH.size]
                self._unread = length
                self._drop_unread(deadline)
                if answer_id == call_id:
                    raise AnswerTooLarge(f"an answer of {length} bytes")
                continue  # a call that stopped waiting: its answer dropped
            self._fill(LENGTH.size + length, deadline)
            frame = memoryview(bytes(buffer[4 : 4 + length]))
            del buffer[: 4 + length]
            _, status = ANSWER_HEAD.unpack_from(frame)
            headers_field, body = _read_fields(frame, ANSWER_HEAD.size)
            headers = [(str(n), str(v)) for n, v in json.loads(headers_field or b"[]")]
            return Answer(status, headers, body or b"")


def _chunk(sock: socket.socket) -> bytes:
    data = sock.recv(CHUNK)
    if not data:
        raise FrameError("the host closed the connection")
    return data


def _receive(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        data += _chunk(sock)
    return data


def new_nonce() -> bytes:
    return os.urandom(NONCE_BYTES)
