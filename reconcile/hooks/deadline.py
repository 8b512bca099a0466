"""A deadline on a whole webhook call, not on each socket read.

requests' timeouts, which are urllib3's, bound each socket operation: a server that trickles its
answer a byte at a time (status line, headers or body) never trips them, and holds the run past
`--max-duration` and past SIGTERM. requests has no deadline for a whole call, so it is kept on
urllib3, requests' transport (the session's adapter uses `WATCHED_POOLS`: connections.py).
Every call is watched: a call whose own timeout has passed, or whose run has ended (the budget,
or a signal), has its connection's socket shut down by a watcher thread, which wakes the
blocked read at once. The call then fails as a timeout (or stops the run), never with what it
had half read.

Connections are pooled: a connection is watched only while a call holds it (from the request
until its answer is read or given back), so a connection back in the pool is never cut.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from reconcile.budget import Budget

#: How often the watcher looks at the calls in flight, in seconds.
WATCH_INTERVAL = 0.05

_current = threading.local()


class CallWatch:
    """One call in flight: its deadline (time.monotonic), the connection it holds, and whether
    the watcher cut it."""

    def __init__(self) -> None:
        self.deadline = float("inf")
        self.connection: Any = None
        self.cut = False


class CallWatcher:
    def __init__(self, budget: Budget) -> None:
        self._budget = budget
        self._lock = threading.Lock()
        self._calls: set[CallWatch] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self) -> Iterator[CallWatch]:
        """Watch the calling thread's webhook call for as long as the block runs."""
        watch = CallWatch()
        with self._lock:
            self._calls.add(watch)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name="webhook-deadlines", daemon=True
                )
                self._thread.start()
        _current.watch = watch
        try:
            yield watch
        finally:
            _current.watch = None
            with self._lock:
                self._calls.discard(watch)
                watch.connection = None

    def start_attempt(self, watch: CallWatch, seconds: float) -> None:
        with self._lock:
            watch.deadline = time.monotonic() + seconds

    def release(self, watch: CallWatch) -> None:
        """The call gives its connection back (to the pool, or closed): no longer cut."""
        with self._lock:
            watch.connection = None

    def close(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_INTERVAL):
            now = time.monotonic()
            ended = self._budget.expired
            with self._lock:
                for watch in self._calls:
                    if watch.connection is not None and (ended or now >= watch.deadline):
                        watch.cut = True
                        _shut(watch.connection)
                        watch.connection = None


def _shut(connection: Any) -> None:
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _attach(connection: Any) -> None:
    """The calling thread's call now holds `connection` (run in that thread)."""
    watch: CallWatch | None = getattr(_current, "watch", None)
    if watch is not None:
        watch.connection = connection


class _WatchedHTTPPool(HTTPConnectionPool):
    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        _attach(conn)
        return super()._make_request(conn, *args, **kwargs)


class _WatchedHTTPSPool(HTTPSConnectionPool):
    def _prepare_proxy(self, conn: Any) -> None:
        # the tunnel through a proxy (CONNECT and its answer) is set up before the request:
        # the call's deadline holds the connection from there
        _attach(conn)
        super()._prepare_proxy(conn)

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        _attach(conn)
        return super()._make_request(conn, *args, **kwargs)


#: Pool classes whose connections a `CallWatcher` can cut: a pool manager's
#: `pool_classes_by_scheme` (connections.py).
WATCHED_POOLS: dict[str, type[HTTPConnectionPool]] = {
    "http": _WatchedHTTPPool,
    "https": _WatchedHTTPSPool,
}
