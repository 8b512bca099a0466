"""Faults on purpose, for tests and `scripts/faults.py`.

- `FaultProxy`: a plain-HTTP proxy in front of the real kube-apiserver (HTTPS) that answers a
  share of the requests with a fault instead of (or after) forwarding them: 409, 429 with
  Retry-After, 500, 503, a connection reset, or a response slower than the client's request
  timeout. It can also SIGKILL a process at its N-th mutating request, before or after the
  request reaches the server.
- `FaultyCluster`: the same faults for the in-process backend, as a wrapper of the `Cluster`
  protocol (typed errors instead of HTTP answers).

"After" faults are the nasty ones: the server did the write, the client never learns it.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import ssl
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import urlsplit

from reconcile.cluster.errors import Conflict, TooManyRequests, Unavailable
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj
from tests.support.wrapped import ForwardingCluster

_T = TypeVar("_T")

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Fault(StrEnum):
    CONFLICT = "409"
    THROTTLED = "429"
    SERVER_ERROR = "500"
    UNAVAILABLE = "503"
    RESET = "reset"  # the connection drops before the request reaches the server
    SLOW = "slow"  # no answer within the client's timeout; the request lands late
    ERROR_AFTER = "500-after"  # the write happened, the client gets a 500
    RESET_AFTER = "reset-after"  # the write happened, the connection drops


ALL_FAULTS = tuple(Fault)
# Faults that only make sense once the request was forwarded: writes only (a read that
# happened changes nothing).
_AFTER = frozenset({Fault.ERROR_AFTER, Fault.RESET_AFTER})


@dataclass
class FaultPlan:
    """Which requests fail, and how: `rate` of them, drawn from `kinds` by a seeded RNG."""

    rate: float
    seed: int = 1
    kinds: tuple[Fault, ...] = ALL_FAULTS
    slow_seconds: float = 3.0
    counts: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    enabled: bool = True

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()

    def pick(self, mutating: bool) -> Fault | None:
        with self._lock:
            self.requests += 1
            if not self.enabled or self._random.random() >= self.rate:
                return None
            kinds = [k for k in self.kinds if mutating or k not in _AFTER]
            if not kinds:
                return None
            fault = self._random.choice(kinds)
            self.counts[fault.value] += 1
            return fault

    @property
    def faulted(self) -> int:
        return sum(self.counts.values())


def _status(code: int, reason: str, message: str) -> bytes:
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    ).encode()


_CANNED = {
    Fault.CONFLICT: (409, "Conflict", "injected: the object has been modified"),
    Fault.THROTTLED: (429, "TooManyRequests", "injected: too many requests"),
    Fault.SERVER_ERROR: (500, "InternalError", "injected: etcdserver: request timed out"),
    Fault.UNAVAILABLE: (503, "ServiceUnavailable", "injected: the server is shutting down"),
}


@dataclass
class KillSwitch:
    """SIGKILL `pid` at its `at`-th mutating request (1-based), before the request reaches the
    server or after it did (before the answer). `where` records what the request was."""

    at: int
    after: bool
    pid: int = 0
    seen: int = 0
    where: str = ""
    fired: bool = False

    def check(self, method: str, path: str, forwarded: bool) -> bool:
        """True when the process was killed at this point (the request then gets no answer)."""
        if self.fired or method not in MUTATING_METHODS or not self.pid:
            return False
        if not forwarded:
            self.seen += 1
        if self.seen != self.at or forwarded != self.after:
            return False
        self.fired = True
        self.where = f"{'after' if self.after else 'before'} {method} {path}"
        os.kill(self.pid, signal.SIGKILL)
        return True


class FaultProxy(ThreadingHTTPServer):
    """http://127.0.0.1:<port> → `target` (https, certificate not checked: the test plane's)."""

    daemon_threads = True

    def __init__(self, target: str, plan: FaultPlan, kill: KillSwitch | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        parts = urlsplit(target)
        self.target_host = parts.hostname or "127.0.0.1"
        self.target_port = parts.port or 443
        self.plan = plan
        self.kill = kill
        self.kill_lock = threading.Lock()
        # Sees every write before it is forwarded: (method, path, body).
        self.observe: Callable[[str, str, bytes | None], None] | None = None
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPSConnection(
            self.target_host, self.target_port, context=self.context, timeout=60
        )
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def killed(self, method: str, path: str, forwarded: bool) -> bool:
        if self.kill is None:
            return False
        with self.kill_lock:
            return self.kill.check(method, path, forwarded)


_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)


class _ProxyHandler(BaseHTTPRequestHandler):
    server: FaultProxy
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        method = self.command
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        mutating = method in MUTATING_METHODS
        if mutating and self.server.observe is not None:
            self.server.observe(method, self.path, body)
        if self.server.killed(method, self.path, forwarded=False):
            self._drop()
            return
        fault = self.server.plan.pick(mutating)
        if fault in _CANNED:
            code, reason, message = _CANNED[fault]
            extra = [("Retry-After", "1")] if fault is Fault.THROTTLED else []
            body = _status(code, reason, message)
            self._answer(code, [("Content-Type", "application/json"), *extra], body)
            return
        if fault is Fault.RESET:
            self._drop()
            return
        if fault is Fault.SLOW:
            time.sleep(self.server.plan.slow_seconds)
        status, response_headers, data = self.server.forward(method, self.path, headers, body)
        if self.server.killed(method, self.path, forwarded=True):
            self._drop()
            return
        if fault is Fault.RESET_AFTER:
            self._drop()
            return
        if fault is Fault.ERROR_AFTER:
            code, reason, message = _CANNED[Fault.SERVER_ERROR]
            body = _status(code, reason, message)
            self._answer(code, [("Content-Type", "application/json")], body)
            return
        dropped = _HOP_BY_HOP | {"content-length"}
        kept = [(k, v) for k, v in response_headers if k.lower() not in dropped]
        self._answer(status, kept, data)

    def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        try:
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (a slow answer): what a server sees too

    def _drop(self) -> None:
        """A TCP reset: no answer at all."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815 - http.server's names

    def log_message(self, format: str, *args: Any) -> None:
        pass


def proxy_kubeconfig(plane_kubeconfig: dict[str, Any], proxy_url: str) -> dict[str, Any]:
    """The control plane's kubeconfig, pointed at the proxy."""
    config: dict[str, Any] = json.loads(json.dumps(plane_kubeconfig))
    for cluster in config["clusters"]:
        cluster["cluster"] = {"server": proxy_url}
    return config


class FaultyCluster(ForwardingCluster):
    """A `Cluster` whose requests fail per `plan`, as the live backend reports such failures:
    Conflict, TooManyRequests (retry_after 1), Unavailable (500 / 503 / status 0 for resets
    and timeouts). No retries here: the in-process backend has no transport to retry."""

    def __init__(self, inner: Cluster, plan: FaultPlan) -> None:
        super().__init__(inner)
        self.plan = plan

    def _before(self, mutating: bool) -> Fault | None:
        fault = self.plan.pick(mutating)
        if fault is Fault.CONFLICT:
            raise Conflict("injected: the object has been modified")
        if fault is Fault.THROTTLED:
            raise TooManyRequests("injected: too many requests", retry_after=1.0)
        if fault is Fault.SERVER_ERROR:
            raise Unavailable("injected: etcdserver: request timed out", status=500)
        if fault is Fault.UNAVAILABLE:
            raise Unavailable("injected: the server is shutting down")
        if fault is Fault.RESET:
            raise Unavailable("injected: connection reset by peer", status=0)
        return fault

    def read(self, call: Callable[[], _T]) -> _T:
        if self._before(False) is Fault.SLOW:
            raise Unavailable("injected: no response within the request timeout", status=0)
        return call()

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        fault = self._before(True)
        result = call()
        if fault in (Fault.ERROR_AFTER, Fault.SLOW):
            raise Unavailable("injected: the write happened, the answer was lost", status=500)
        if fault is Fault.RESET_AFTER:
            raise Unavailable("injected: connection reset after the write", status=0)
        return result
