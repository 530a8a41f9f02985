"""A fast local webhook receiver for the delivery benchmark, and a load test of it alone.

``serve`` runs one single-threaded ``asyncio`` HTTP/1.1 server on 127.0.0.1 (keep-alive,
pipelining, ``Content-Length`` bodies). It answers every POST at once with ``200 {"ok":true}``
and records the wall-clock time (``time.time()``, comparable across the processes of this
machine) at which the request was complete, with the delivery's id: the ``X-Service-Delivery``
header when there is one, else the raw body (the peer's id is inside its JSON; the benchmark
parses it afterwards, so the receiver does as little as possible per request). It prints its
port on the first line of standard output.

Control endpoints (GET, for the benchmark):
    /_records   the records since the last call, as JSON ``[[time, id or null, body or null]]``
    /_stats     ``{"cpu": seconds of CPU this process used, "received": count}``

``load URL`` measures the receiver alone: keep-alive connections in one ``asyncio`` process
with raw sockets (far cheaper per request than any HTTP client library) send POSTs as fast as
the server answers; it prints the rate and the round-trip percentiles as JSON.

Standard library only: it runs in any virtual environment.
"""

import argparse
import asyncio
import contextlib
import json
import sys
import time

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'
MAX_HEAD = 64 * 1024


class Recorder:
    """What arrived: (time, id or None, body or None) per POST."""

    def __init__(self):
        self.records = []
        self.received = 0

    def take(self) -> list:
        records, self.records = self.records, []
        return records


class ReceiverProtocol(asyncio.Protocol):
    """One connection: parse requests from the buffer, answer each as soon as it is complete."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.buffer = b""
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                if len(self.buffer) > MAX_HEAD:
                    self.transport.close()
                return
            lines = self.buffer[:head_end].split(b"\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get(b"content-length", b"0"))
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            body = self.buffer[head_end + 4 : end]
            self.buffer = self.buffer[end:]
            self.handle(lines[0], headers, body)
            if headers.get(b"connection", b"").lower() == b"close":
                self.transport.close()
                return

    def handle(self, request_line: bytes, headers: dict, body: bytes) -> None:
        method, _, rest = request_line.partition(b" ")
        path = rest.partition(b" ")[0]
        if method == b"GET" and path.startswith(b"/_"):
            self.transport.write(self.control(path))
            return
        now = time.time()
        delivery = headers.get(b"x-service-delivery")
        if delivery is not None:
            self.recorder.records.append((now, delivery.decode(), None))
        else:
            self.recorder.records.append((now, None, body.decode("utf-8", "replace")))
        self.recorder.received += 1
        self.transport.write(OK)

    def control(self, path: bytes) -> bytes:
        if path == b"/_records":
            payload = self.recorder.take()
        elif path == b"/_stats":
            payload = {"cpu": time.process_time(), "received": self.recorder.received}
        else:
            return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        data = json.dumps(payload).encode()
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )


async def serve(port: int) -> None:
    recorder = Recorder()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: ReceiverProtocol(recorder), "127.0.0.1", port, backlog=1024, reuse_address=True
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# --- the receiver alone -----------------------------------------------------------------------


async def _client(host, port, request, count, latencies):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for _ in range(count):
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
    finally:
        writer.close()


async def load(url: str, connections: int, requests: int, body_size: int) -> dict:
    """Send ``requests`` POSTs over ``connections`` keep-alive connections; the rate and the
    round trips of the receiver alone."""
    hostport = url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = hostport.partition(":")
    if host not in ("127.0.0.1", "localhost"):
        raise SystemExit("the load test only targets 127.0.0.1")
    body = json.dumps({"type": "load", "pad": "x" * max(0, body_size - 25)}).encode()
    request = (
        f"POST /load HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
        f"X-Service-Delivery: load\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    latencies = []
    per_connection = requests // connections
    started = time.perf_counter()
    await asyncio.gather(
        *(_client(host, int(port), request, per_connection, latencies) for _ in range(connections))
    )
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "connections": connections,
        "rate": len(latencies) / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "client_cpu": time.process_time(),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve", help="run the receiver")
    serve_parser.add_argument("--port", type=int, default=0)
    load_parser = commands.add_parser("load", help="measure the receiver alone")
    load_parser.add_argument("url")
    load_parser.add_argument("--connections", type=int, default=16)
    load_parser.add_argument("--requests", type=int, default=20_000)
    load_parser.add_argument("--body-size", type=int, default=160)
    args = parser.parse_args(argv)
    if args.command == "serve":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(args.port))
    else:
        result = asyncio.run(load(args.url, args.connections, args.requests, args.body_size))
        json.dump(result, sys.stdout)
        print()


if __name__ == "__main__":
    main()
