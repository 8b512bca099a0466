"""A scripted webhook peer on loopback for the hook transport tests: each test queues the
replies it wants (status, headers, body, delays) and inspects the requests that arrived."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)  # bytes are sent as they are, anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    body_delay: float = 0.0  # after the headers, before the body


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int  # the same port on consecutive requests: the connection was reused

    def json(self) -> Any:
        return json.loads(self.body)


class HookServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[Reply] = []
        self.default = Reply(200, {"ok": True})
        self.seen: list[Seen] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"

    def next_reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            return self.script.pop(0) if self.script else self.default


class _Handler(BaseHTTPRequestHandler):
    server: HookServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        seen = Seen(
            self.command,
            self.path,
            dict(self.headers.items()),
            self.rfile.read(length),
            self.client_address[1],
        )
        reply = self.server.next_reply(seen)
        if reply.delay and self.server.stopping.wait(reply.delay):
            return
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        for key, value in {"Content-Type": "application/json", **reply.headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if reply.body_delay:
            self.wfile.flush()
            if self.server.stopping.wait(reply.body_delay):
                return
        with contextlib.suppress(OSError):
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve() -> Iterator[HookServer]:
    server = HookServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
