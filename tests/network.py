"""Local network parts for tests: a free port, and a server that accepts connections and never
answers (a hung broker or cache, a half-open firewall)."""

import socket
import threading


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SilentServer:
    """Accepts TCP connections and never answers; ``accepted`` counts them."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def accepted(self) -> int:
        return len(self.held)

    def _accept(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self):
        self.server.close()
        for connection in self.held:
            connection.close()
