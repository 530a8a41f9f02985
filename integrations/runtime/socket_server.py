"""The runtime host's frame server: the platform's persistent connections (``frames.py``) on a
Unix socket and/or a TCP port, served by one asyncio event loop that reads and checks each
frame and hands the request to the host's own ``serve`` (the one its HTTP application calls)
on a thread of its pool; each answer goes back on its connection as it comes, so calls
on one connection never wait for one another.

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

from . import after_reply, frames, protocol
from .call_threads import CallThreads
from .envelope import check_parts
from .replies import Reply

logger = logging.getLogger("integrations.runtime")

#: Calls served at once per host process (threads waiting on workers): as the HTTP server's.
THREADS = 48
#: Bytes of a frame beyond its parts (its head, the fields' lengths, the path and trace).
FRAME_OVERHEAD = 64 * 1024
#: Bytes skipped at a time from a frame over the limit.
SKIP_CHUNK = 256 * 1024

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
        self.open_connections: dict[asyncio.StreamWriter, asyncio.Task] = {}
        self.limit = app.config.max_envelope_bytes + FRAME_OVERHEAD
        self.threads = CallThreads(threads, "runtime-frames")

    def serve(self, request: frames.Request, writer: asyncio.StreamWriter, loop) -> None:
        """One verified request, on a thread of the pool: its answer frame handed to the
        event loop to send, then the work the call left for after it (``after_reply``)."""
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
        with after_reply.held() as later:
            try:
                reply = self.app.serve(method, path, FrameRequest(request), carrier)
                frame = answer_frame(request.call_id, reply)
            except Exception:
                logger.exception("runtime host: unexpected error")
                error = Reply.json(500, {"error": protocol.RUNTIME_ERROR})
                frame = answer_frame(request.call_id, error)
        try:
            loop.call_soon_threadsafe(_send, writer, frame)
        except RuntimeError:  # the loop is closed: the host is stopping, the answer unsent
            pass
        finally:
            after_reply.run(later)

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        nonce = frames.new_nonce()
        writer.write(frames.HELLO + nonce)
        config = self.app.config
        verifier = frames.Verifier(config.signing_keys, config.signature_tolerance, nonce)
        loop = asyncio.get_running_loop()
        self.open_connections[writer] = asyncio.current_task()
        try:
            while True:
                try:
                    head = await reader.readexactly(8)  # the length and the call id
                except (asyncio.IncompleteReadError, ConnectionError):
                    break  # closed, between frames or within one: nothing of it runs
                (length,) = frames.LENGTH.unpack_from(head)
                if length > self.limit:
                    too_large = Reply.json(413, frames.too_large(config.max_envelope_bytes))
                    writer.write(answer_frame(frames.call_id_of(head[4:]), too_large))
                    await _skip(reader, length - 4)
                    continue
                try:
                    frame = head[4:] + await reader.readexactly(max(length - 4, 0))
                    request = verifier.open(frame)
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                except frames.Refused as refused:
                    reply = Reply.json(refused.status, refused.body)
                    writer.write(answer_frame(refused.call_id, reply))
                    logger.warning("frames: a request refused (%s)", refused)
                    break
                self.threads.submit(self.serve, request, writer, loop)
        finally:
            self.open_connections.pop(writer, None)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()

    async def close_connections(self, timeout: float = 2):
        """On the way out: each open connection closed, its reading ended as a peer's close
        ends it (never cancelled, which asyncio reports as an error of each connection)."""
        for writer in list(self.open_connections):
            writer.close()
        if self.open_connections:
            await asyncio.wait(list(self.open_connections.values()), timeout=timeout)

    async def start(self, unix_path: str | None, tcp: tuple[str, int] | None) -> list:
        """The listening servers; SocketInUse when another host answers on ``unix_path``,
        CannotListen when a socket cannot be had (a port taken, a path too long)."""
        servers = []
        if unix_path:
            _claim_socket_path(unix_path)
            try:
                server = await asyncio.start_unix_server(self.connection, path=unix_path)
            except OSError as error:
                raise CannotListen(_cannot_listen(f"unix://{unix_path}", error)) from None
            os.chmod(unix_path, 0o660)
            self.socket_inode = os.stat(unix_path).st_ino
            servers.append(server)
            logger.info("frames on unix://%s", unix_path)
        if tcp:
            try:
                server = await asyncio.start_server(self.connection, tcp[0], tcp[1])
            except OSError as error:
                for started in servers:
                    started.close()
                if unix_path:
                    _remove_own_socket(unix_path, self.socket_inode)
                raise CannotListen(_cannot_listen(f"tcp://{tcp[0]}:{tcp[1]}", error)) from None
            servers.append(server)
            logger.info("frames on tcp://%s:%s", tcp[0], server.sockets[0].getsockname()[1])
        return servers


def _send(writer: asyncio.StreamWriter, frame: bytes):
    if not writer.is_closing():  # else the connection ended while the call ran: its caller
        writer.write(frame)  # has failed it


async def _skip(reader: asyncio.StreamReader, remaining: int):
    while remaining > 0:
        data = await reader.read(min(remaining, SKIP_CHUNK))
        if not data:
            return
        remaining -= len(data)


class CannotListen(Exception):
    """A socket this host was to listen on cannot be had: said to the operator, no traceback."""


class SocketInUse(CannotListen):
    """Another runtime host answers on the Unix socket this one was to listen on."""


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

    asyncio.run(run())
