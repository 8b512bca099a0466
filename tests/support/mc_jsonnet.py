"""Jsonnet hooks served as Metacontroller's examples deploy them: the `metacontroller/jsonnetd`
image (github.com/metacontroller/jsonnetd), here on a loopback port with the `jsonnet` package.

What jsonnetd does, and so what this does: every `*.jsonnet` file of the directory (its working
directory, a ConfigMap of the hooks mounted there) is read once at start and served at
`/<file name without .jsonnet>`; a POST's body is handed to the file's top-level function as
the Jsonnet code of its argument `request` (`vm.TLACode("request", body)`), and the result of
evaluating the file is the answer (200, `application/json`). An evaluation error answers 500
with the error's text; a method other than POST answers 405; another path, 404.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.hookserver import serving

try:  # the `jsonnet` package (the dev extras), which has no type stubs
    _jsonnet: Any = importlib.import_module("_jsonnet")
except ImportError as error:  # a .venv set up before the package was added
    raise ImportError(
        f"{error}: the `jsonnet` package is missing (pip install -e '.[dev]')"
    ) from error


def evaluate(path: Path, source: str, body: str) -> str:
    """The hook file's answer to a request body, as jsonnetd evaluates it."""
    result: str = _jsonnet.evaluate_snippet(str(path), source, tla_codes={"request": body})
    return result


class JsonnetServer(ThreadingHTTPServer):
    """A directory's hooks (name → (path, source)) on a free loopback port; the names of the
    hooks called are kept in `calls`, in order."""

    daemon_threads = True

    def __init__(self, hooks: dict[str, tuple[Path, str]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hooks = hooks
        self.calls: list[str] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, name: str) -> None:
        with self._lock:
            self.calls.append(name)


class _Handler(BaseHTTPRequestHandler):
    server: JsonnetServer

    def do_POST(self) -> None:
        hook = self.server.hooks.get(self.path.lstrip("/"))
        if hook is None:
            self._answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        self.server.record(self.path.lstrip("/"))
        try:
            result = evaluate(*hook, body)
        except RuntimeError as error:  # the jsonnet package's evaluation error
            self._answer(500, f"{error}\n".encode(), "text/plain; charset=utf-8")
            return
        self._answer(200, result.encode(), "application/json")

    def do_GET(self) -> None:
        self._not_allowed()

    def do_PUT(self) -> None:
        self._not_allowed()

    def do_DELETE(self) -> None:
        self._not_allowed()

    def _not_allowed(self) -> None:
        if self.path.lstrip("/") not in self.server.hooks:
            self._answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
            return
        self._answer(405, b"Method not allowed\n", "text/plain; charset=utf-8")

    def _answer(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def hooks_of(directory: Path) -> dict[str, tuple[Path, str]]:
    """Each `*.jsonnet` file of the directory by its hook name, read now (as jsonnetd reads
    them at start)."""
    return {
        path.name.removesuffix(".jsonnet"): (path, path.read_text())
        for path in sorted(directory.glob("*.jsonnet"))
    }


@contextlib.contextmanager
def jsonnet_server(directory: Path) -> Iterator[JsonnetServer]:
    """jsonnetd serving `directory`'s hooks on a free loopback port (see the module's text)."""
    hooks = hooks_of(directory)
    if not hooks:
        raise ValueError(f"{directory} holds no *.jsonnet file")
    with serving(JsonnetServer(hooks)) as server:
        yield server


@contextlib.contextmanager
def jsonnet_hooks(directory: Path) -> Iterator[str]:
    """The base URL of jsonnetd serving `directory`'s hooks (as `hook_server` gives for a
    Python `sync.py`): a controller pointed there (`pointed_at`) keeps each URL's path, the
    hook's name."""
    with jsonnet_server(directory) as server:
        yield server.url
