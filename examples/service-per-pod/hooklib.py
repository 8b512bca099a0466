"""Runs an example's hook functions either way `reconcile` can call them:

    python3 hooks.py sync          # a local command hook: request JSON on stdin, response on
                                   # stdout
    python3 hooks.py --lines sync  # a long-lived one (`protocol: lines`): one request per line
                                   # on stdin, one response per line on stdout, until stdin ends
    python3 hooks.py --serve 8080  # webhooks on 127.0.0.1:8080: POST /sync, /customize, ...
                                   # (port 0 picks a free port; the first line printed says which)

Standard library only, so the examples run with any Python 3.

Each example directory carries its own copy of this file, beside its hooks.py, so that the
directory works wherever it is copied. The one to edit is examples/hooklib.py in the reconcile
repository; copy it over the others after (examples/README.md says how).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Hook = Callable[[dict[str, Any]], dict[str, Any]]


def serve(hooks: dict[str, Hook], port: int) -> None:
    # imported here: a command hook, a process per call, never serves (http.server and what it
    # imports would be most of that process's start-up)
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hook = hooks.get(self.path.strip("/"))
            if hook is None:
                self.send_error(404, f"no hook at {self.path}; try /{', /'.join(hooks)}")
                return
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            body = json.dumps(hook(request)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        # http.server's default backlog is 5: with more calls at once than that (reconcile
        # runs 8 workers by default), the kernel drops connections and each retries after 1 s
        request_queue_size = 128

    server = Server(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


def answer_lines(hook: Hook) -> None:
    """One compact JSON response line per request line, flushed at once. While the hook runs,
    what it prints goes to stderr: stdout carries the answers only."""
    answers = sys.stdout
    sys.stdout = sys.stderr
    for line in sys.stdin.buffer:
        if line.strip():
            answers.write(json.dumps(hook(json.loads(line)), separators=(",", ":")) + "\n")
            answers.flush()


def run(hooks: dict[str, Hook]) -> None:
    args = sys.argv[1:]
    if args[:1] == ["--serve"]:
        serve(hooks, int(args[1]) if len(args) > 1 else 8080)
        return
    lines = args[:1] == ["--lines"]
    if lines:
        args = args[1:]
    name = args[0] if args else "sync"
    if name not in hooks:
        sys.exit(f"unknown hook {name!r}; expected one of: {', '.join(hooks)}")
    if lines:
        answer_lines(hooks[name])
        return
    json.dump(hooks[name](json.load(sys.stdin)), sys.stdout)
