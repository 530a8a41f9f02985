"""The runtime host's frame server: the platform's persistent connections (``frames.py``) on a
Unix socket and/or a TCP port, served by one asyncio event loop (uvloop's: libuv's loop,
transports and timers in C) that reads and checks each frame and carries an envelope's call
itself (``loop_calls``); anything else (a health or code check, a bundle to load, a traced
call) goes to the host's own ``serve`` (the one its HTTP application calls) on a thread of
its pool. Each answer goes back on its connection as it comes, so calls on one connection
never wait for one another.

A connection's requests are trusted as ``frames.Verifier`` says; one that is not (a forged,
stale or replayed frame, a malformed one) is answered and the connection closed, and the
calls of that connection still running are answered to no one. A frame over the envelope
size limit is answered 413 and its bytes skipped, the connection kept.
"""

import asyncio
import contextlib
import logging
import os
import signal
import socket
import stat
import time

import uvloop

from . import after_reply, frames, protocol
from .call_threads import CallThreads
from .calls import described_call, log_call
from .envelope import check_parts
from .loop_calls import LoopCall, raising
from .replies import Reply

logger = logging.getLogger("integrations.runtime")

#: Calls served at once per host process (threads waiting on workers): as the HTTP server's.
THREADS = 48
#: Bytes of a frame beyond its parts (its head, the fields' lengths, the path and trace).
FRAME_OVERHEAD = 64 * 1024

PARTS = (
    (protocol.EVENT_PART, frames.EVENT),
    (protocol.ENVIRONMENT_PART, frames.ENVIRONMENT),
    (protocol.FETCH_BODY_PART, frames.FETCH_BODY),
    (protocol.BUNDLE_PART, frames.BUNDLE),
)


class FrameRequest:
    """A verified frame's body or envelope (``host.route`` asks for the one its path wants)."""

    def __init__(self, request: frames.Request):
        self.request = request

    def body(self) -> bytes:
        return self.request.fields[frames.BODY] or b""

    def envelope(self, integration_name: str):
        fields = self.request.fields
        parts = {name: fields[position] for name, position in PARTS if fields[position] is not None}
        return check_parts(parts, integration_name)


def answer_frame(call_id: int, reply: Reply) -> bytes:
    headers = [*reply.headers, (protocol.OUTCOME_HEADER, reply.outcome), *reply.log_headers()]
    return frames.encode_answer(call_id, reply.status, headers, reply.body)


class FrameServer:
    """Serves ``app`` (a ``host.RuntimeHost``) to frame connections."""

    def __init__(self, app, threads: int = THREADS):
        self.app = app
        self.socket_inode: int | None = None  # the Unix socket file this server made
        self.open_connections: dict[FrameConnection, asyncio.Future] = {}
        self.limit = app.config.max_envelope_bytes + FRAME_OVERHEAD
        self.threads = CallThreads(threads, "runtime-frames")

    def received(self, request: frames.Request, connection: "FrameConnection") -> None:
        """One verified request, on the event loop: a call carried here when it may be
        (``LoopCall``: an envelope without its bundle), its reply when it needs no call;
        anything else served on a thread (``serve``)."""
        path = request.text(frames.PATH)
        app = self.app
        if not app.quick(path, request.fields[frames.BUNDLE] is not None):
            self.threads.submit(self.serve, request, connection)
            return
        logged = (described_call(), time.monotonic())
        try:
            routed = app.route("POST", path, FrameRequest(request), logged[0])
        except Exception as error:
            routed = error
        if isinstance(routed, (Reply, Exception)):
            replying = raising(routed) if isinstance(routed, Exception) else lambda: routed
            self.answer_on_loop(connection, request.call_id, replying, logged)
            return
        LoopCall(self, connection, request.call_id, routed, logged).begin()

    def serve(self, request: frames.Request, connection: "FrameConnection") -> None:
        """One verified request, on a thread of the pool, all of it (``RuntimeHost.serve``)."""
        path = request.text(frames.PATH)
        method = "GET" if path == protocol.HEALTH_PATH else "POST"
        carrier = {
            name: request.text(position)
            for name, position in (
                ("traceparent", frames.TRACEPARENT),
                ("tracestate", frames.TRACESTATE),
            )
            if request.fields[position] is not None
        }
        replying = lambda: self.app.serve(method, path, FrameRequest(request), carrier)  # noqa: E731
        self._answer_on_thread(request.call_id, connection, replying, None)

    def on_thread(self, call_id: int, connection: "FrameConnection", replying, logged) -> None:
        """Reply to a call on a thread of the pool: ``replying()`` may wait."""
        self.threads.submit(self._answer_on_thread, call_id, connection, replying, logged)

    def hand_off_works(self, works: list) -> None:
        """The work a call left for after its answer that must wait, on a thread."""
        self.threads.submit(after_reply.run, works)

    def answer_on_loop(self, connection, call_id: int, replying, logged: tuple | None) -> None:
        """On the event loop: ``replying()``'s frame sent, then the work the call left for
        after it that needs no wait (the rest on a thread)."""
        with after_reply.held() as later:
            frame = self.framed(call_id, replying, logged)
        connection.send(frame)
        after_reply.run_without_waiting(later, self.hand_off_works)

    def framed(self, call_id: int, replying, logged: tuple | None) -> bytes:
        """The answer frame of ``replying()`` (a 500 when it raises), the call's log line
        left for after it (``logged``: what it says and when the call came; None: left
        already)."""
        try:
            reply = replying()
        except Exception:
            logger.exception("runtime host: unexpected error")
            reply = Reply.json(500, {"error": protocol.RUNTIME_ERROR})
        if logged is not None:
            log_call(logged[0], reply, logged[1])
        return answer_frame(call_id, reply)

    def _answer_on_thread(self, call_id, connection, replying, logged) -> None:
        """``replying()``'s frame handed to the event loop to send, then the work the call
        left for after it (``after_reply``)."""
        with after_reply.held() as later:
            frame = self.framed(call_id, replying, logged)
        try:
            connection.loop.call_soon_threadsafe(connection.send, frame)
        except RuntimeError:  # the loop is closed: the host is stopping, the answer unsent
            pass
        finally:
            after_reply.run(later)

    def connection(self) -> "FrameConnection":
        return FrameConnection(self)

    async def close_connections(self, timeout: float = 2):
        """On the way out: each open connection closed, as a peer's close ends it."""
        for connection in list(self.open_connections):
            connection.close()
        if self.open_connections:
            await asyncio.wait(list(self.open_connections.values()), timeout=timeout)

    async def start(self, unix_path: str | None, tcp: tuple[str, int] | None) -> list:
        """The listening servers; SocketInUse when another host answers on ``unix_path``,
        CannotListen when a socket cannot be had (a port taken, a path too long)."""
        loop = asyncio.get_running_loop()
        servers = []
        if unix_path:
            _claim_socket_path(unix_path)
            try:
                server = await loop.create_unix_server(self.connection, path=unix_path)
            except OSError as error:
                raise CannotListen(_cannot_listen(f"unix://{unix_path}", error)) from None
            os.chmod(unix_path, 0o660)
            self.socket_inode = os.stat(unix_path).st_ino
            servers.append(server)
            logger.info("frames on unix://%s", unix_path)
        if tcp:
            try:
                server = await loop.create_server(self.connection, tcp[0], tcp[1])
            except OSError as error:
                for started in servers:
                    started.close()
                if unix_path:
                    _remove_own_socket(unix_path, self.socket_inode)
                raise CannotListen(_cannot_listen(f"tcp://{tcp[0]}:{tcp[1]}", error)) from None
            servers.append(server)
            logger.info("frames on tcp://%s:%s", tcp[0], server.sockets[0].getsockname()[1])
        return servers


class FrameConnection(asyncio.Protocol):
    """One connection's frames, cut from the bytes as they arrive (a protocol, not a stream
    reader: no coroutine woken twice per frame). Each whole frame is verified on the loop
    and its call handed to a thread; a frame over the limit is answered 413 and its bytes
    dropped as they come, the connection kept."""

    def __init__(self, server: FrameServer):
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.skipping = 0  # bytes still to drop of a frame over the limit
        self.verifier: frames.Verifier | None = None
        self.closed = self.loop.create_future()

    def connection_made(self, transport):
        self.transport = transport
        nonce = frames.new_nonce()
        config = self.server.app.config
        self.verifier = frames.Verifier(config.signing_keys, config.signature_tolerance, nonce)
        self.server.open_connections[self] = self.closed
        transport.write(frames.HELLO + nonce)

    def data_received(self, data: bytes):
        if self.skipping:
            dropped = min(self.skipping, len(data))
            self.skipping -= dropped
            data = data[dropped:]
        buffer = self.buffer
        buffer += data
        while len(buffer) >= 8 and not self.transport.is_closing():  # the length, the call id
            (length,) = frames.LENGTH.unpack_from(buffer)
            if length > self.server.limit:
                self._refuse_too_large(frames.call_id_of(bytes(buffer[4:8])))
                dropped = min(4 + length, len(buffer))
                self.skipping = 4 + length - dropped
                del buffer[:dropped]
                continue
            if len(buffer) < 4 + length:
                return  # the rest of it has not come yet
            frame = bytes(memoryview(buffer)[4 : 4 + length])
            del buffer[: 4 + length]
            try:
                request = self.verifier.open(frame)
            except frames.Refused as refused:
                reply = Reply.json(refused.status, refused.body)
                self.transport.write(answer_frame(refused.call_id, reply))
                logger.warning("frames: a request refused (%s)", refused)
                self.close()
                return
            if _envelope_size(request) > self.server.app.config.max_envelope_bytes:
                self._refuse_too_large(request.call_id)  # as over HTTP: the parts' sum
                continue
            self.server.received(request, self)

    def _refuse_too_large(self, call_id: int):
        limit = self.server.app.config.max_envelope_bytes
        self.transport.write(answer_frame(call_id, Reply.json(413, frames.too_large(limit))))

    def send(self, frame: bytes):
        if not self.transport.is_closing():  # else the connection ended while the call ran:
            self.transport.write(frame)  # its caller has failed it

    def close(self):
        """Closed once what was written is sent; nothing more of it is read or run."""
        self.buffer.clear()
        self.transport.close()

    def connection_lost(self, exc):
        self.server.open_connections.pop(self, None)
        if not self.closed.done():
            self.closed.set_result(None)


class CannotListen(Exception):
    """A socket this host was to listen on cannot be had: said to the operator, no traceback."""


class SocketInUse(CannotListen):
    """Another runtime host answers on the Unix socket this one was to listen on."""


def _envelope_size(request: frames.Request) -> int:
    return sum(len(request.fields[position] or b"") for _, position in PARTS)


def _cannot_listen(address: str, error: OSError) -> str:
    reason = error.strerror or str(error)
    if "path too long" in str(error):
        reason = f"a Unix socket's path is at most {UNIX_PATH_MAX} bytes; give a shorter --socket"
    return f"cannot listen on {address}: {reason}"


#: The longest path a Unix socket may have on Linux (``sun_path``, less its final NUL).
UNIX_PATH_MAX = 107


def _claim_socket_path(path: str):
    """Clear ``path`` for this host's socket: a socket file no process listens on any more
    (left by a host that died) is removed, one that a host still answers on is never taken
    from it (SocketInUse: removing it would cut that host off from every new connection
    while it goes on running); anything else stays, for the bind to refuse."""
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return
    except FileNotFoundError:
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        try:
            probe.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # nobody listens: a dead host's
            return
        except OSError:
            pass  # a full backlog or no answer in time: a host is there, and busy
    raise SocketInUse(f"another runtime host answers on {path}; stop it, or give another --socket")


def _remove_own_socket(path: str, inode: int | None):
    """The socket file this server made, on the way out; not another host's made since."""
    with contextlib.suppress(FileNotFoundError):
        found = os.stat(path)
        if stat.S_ISSOCK(found.st_mode) and found.st_ino == inode:
            os.unlink(path)


def serve_frames(app, unix_path: str | None, tcp: tuple[str, int] | None, listening=None):
    """Serve frames until SIGTERM or Ctrl-C (the calling thread runs the event loop);
    ``listening`` is called once the sockets take connections. CannotListen when a socket
    cannot be had (SocketInUse: another host answers on ``unix_path``)."""

    async def run():
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.set)
        frame_server = FrameServer(app)
        servers = await frame_server.start(unix_path, tcp)
        if listening is not None:
            listening()
        await stopping.wait()
        for server in servers:
            server.close()
        await frame_server.close_connections()
        if unix_path:
            _remove_own_socket(unix_path, frame_server.socket_inode)

    uvloop.run(run())  # libuv's loop: under load, a tenth less of the host's CPU per call
