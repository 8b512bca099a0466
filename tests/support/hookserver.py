"""Real HTTP hook servers on loopback whose behaviour each test writes as a Python function."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Handler = Callable[[dict[str, Any]], dict[str, Any] | tuple[int, Any]]


class HookServer(ThreadingHTTPServer):
    """POST / with a JSON body → `handler(request)`; a dict answers 200, a (status, body)
    tuple answers that status (a bytes body is sent as is). Requests are kept in `requests`."""

    daemon_threads = True

    def __init__(self, handler: Handler) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.handler = handler
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.scheme = "http"  # https once its socket is wrapped (tests/support/tlsserver.py)
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server_address[1]}/"

    def record(self, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)


def send_json(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
    """Answers the request `handler` is serving with `status` and the JSON document `data`."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _Handler(BaseHTTPRequestHandler):
    server: HookServer

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.record(request)
        self.server.authorizations.append(self.headers.get("Authorization"))
        answer = self.server.handler(request)
        status, body = (200, answer) if isinstance(answer, dict) else answer
        send_json(self, status, body if isinstance(body, bytes) else json.dumps(body).encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


S = TypeVar("S", bound=socketserver.BaseServer)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """`server` serving from a thread while the block runs, then shut down and closed. Its
    loop looks for the shutdown every 20 ms (`serve_forever` waits 0.5 s by default, which
    every test using a hook server would pay)."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def serve(handler: Handler) -> Iterator[HookServer]:
    with serving(HookServer(handler)) as server:
        yield server
