"""Progress of a pass: a bar on a terminal (`progressbar`), or off a terminal one log line every
few seconds (`LoggedProgress`: a CronJob's log says how far a long pass is)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Protocol

from reconcile.results import ParentResult

log = logging.getLogger("reconcile.progress")


class Progress(Protocol):
    def new_pass(self, number: int) -> None:
        """A pass begins."""

    def start(self, description: str, total: int) -> None:
        """A controller's parents are about to be synced."""

    def advance(self, parent: ParentResult | None = None) -> None:
        """One parent is done (called from worker threads); None: skipped, the run is
        stopping."""


class NoProgress:
    def new_pass(self, number: int) -> None:
        pass

    def start(self, description: str, total: int) -> None:
        pass

    def advance(self, parent: ParentResult | None = None) -> None:
        pass


class LoggedProgress:
    """Every `interval` seconds while a pass syncs parents, one INFO line: the controller's
    parents done of its total, and the pass's parents, writes, errors and hook time so far."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pass = 0
        self._controller = ""
        self._total = self._done = 0
        self._parents = self._writes = self._errors = 0
        self._hook_seconds = 0.0
        self._since = clock()

    def __enter__(self) -> LoggedProgress:
        self._thread = threading.Thread(target=self._tick, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)

    def new_pass(self, number: int) -> None:
        with self._lock:
            self._pass = number
            self._controller, self._total, self._done = "", 0, 0
            self._parents = self._writes = self._errors = 0
            self._hook_seconds = 0.0
            self._since = self._clock()

    def start(self, description: str, total: int) -> None:
        with self._lock:
            self._controller, self._total, self._done = description, total, 0

    def advance(self, parent: ParentResult | None = None) -> None:
        with self._lock:
            self._done += 1
            if parent is None:
                return
            self._parents += 1
            self._writes += sum(1 for a in parent.actions if a.applied)
            self._errors += len(parent.errors)
            self._hook_seconds += sum(h.duration for h in parent.hooks)

    def line(self) -> str | None:
        """The progress line, or None while no controller is syncing."""
        with self._lock:
            if not self._controller or self._done >= self._total:
                return None
            return (
                f"pass {self._pass}, {self._clock() - self._since:.0f}s: {self._controller} "
                f"{self._done} of {self._total} parents; this pass {self._parents} parents, "
                f"{self._writes} writes, {self._errors} errors, hooks {self._hook_seconds:.1f}s"
            )

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            text = self.line()
            if text is not None:
                log.info("%s", text)
