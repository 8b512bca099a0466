"""The run's wall-clock budget and its cancellation.

One `Budget` per run. Every wait (API request timeouts, retries and their backoff, Retry-After,
the client-side rate limiter, hook calls, the pause between passes) is bounded by what is left of
it, so `--max-duration` holds whatever the API server or a hook does. SIGINT / SIGTERM cancel it:
the remaining time drops to zero, waits wake up at once, and the run stops at the next safe point
(before its next request or hook call) and reports what it did.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

# The budget of the run under way, for CPU-bound work that is handed no budget of its own (the
# in-process API server checking a write against a CRD's rules): see `Budget.governing`.
_governing: list[Budget] = []
_governing_lock = threading.Lock()


class BudgetExhausted(Exception):
    """Raised instead of starting (or while waiting for) work after the budget ended or the run
    was interrupted. Nothing was sent for the operation named in the message."""

    def __init__(self, what: str, why: str) -> None:
        self.what = what
        self.why = why
        super().__init__(f"{what}: not done, {why}")


class Budget:
    """What is left of the run's time, and whether the run was interrupted. Thread-safe."""

    def __init__(
        self,
        seconds: float = math.inf,
        clock: Callable[[], float] = time.monotonic,
        *,
        reserve: float = 0.0,
    ):
        """`reserve`: the last seconds of the budget, kept for the run's last words (its report
        and metrics, `closing_remaining`): the work itself ends that much earlier."""
        self.seconds = seconds
        self._clock = clock
        self._reserve = reserve
        self._end = clock() + seconds
        self._deadline = self._end - reserve
        self._cancelled_at = math.inf
        self._cancelled = threading.Event()
        self._reason: str | None = None
        self._interruptible: str | None = None  # the CPU-bound work a signal may stop at once
        self._closing = False

    def remaining(self) -> float:
        """Seconds left; 0 once the budget ended or the run was interrupted. Inside
        `closing()`, the time left for last words instead."""
        if self._closing:
            return self.closing_remaining()
        if self._cancelled.is_set():
            return 0.0
        return max(0.0, self._deadline - self._clock())

    @contextlib.contextmanager
    def closing(self) -> Iterator[None]:
        """The run's last words (releasing its lock): what they send may use the reserve, even
        after the work's time ended or a signal stopped it."""
        self._closing = True
        try:
            yield
        finally:
            self._closing = False

    def closing_remaining(self) -> float:
        """Seconds left for the run's last words: up to the budget's very end, and after an
        interruption at most the reserve."""
        end = min(self._end, self._cancelled_at + self._reserve)
        return max(0.0, end - self._clock())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def cancel(self, reason: str) -> None:
        """Interrupt the run (e.g. `SIGTERM`); the first reason given is kept. Called from a
        signal handler inside `interrupting`, it stops that work at once."""
        if self._reason is None:
            self._reason = reason
            self._cancelled_at = self._clock()
        self._cancelled.set()
        what = self._interruptible
        if what is not None and threading.current_thread() is threading.main_thread():
            self._interruptible = None
            raise BudgetExhausted(what, self.why())

    @contextlib.contextmanager
    def interrupting(self, what: str) -> Iterator[None]:
        """Work with no point to stop at (parsing a large manifest): stopped from outside when
        the budget ends (SIGALRM) or a signal cancels it, with BudgetExhausted. Only in the main
        thread, and only for work that leaves nothing half done (reading, not writing)."""
        self.check(what)
        if threading.current_thread() is not threading.main_thread() or math.isinf(
            self.remaining()
        ):
            yield
            return

        def expire(_signum: int, _frame: FrameType | None) -> None:
            if self._interruptible is not None:
                self._interruptible = None
                raise BudgetExhausted(what, self.why())

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, max(self.remaining(), 0.001))
        self._interruptible = what
        try:
            yield
        finally:
            self._interruptible = None
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @contextlib.contextmanager
    def governing(self) -> Iterator[None]:
        """While inside, `checkpoint()` (from any thread) answers to this budget: CPU-bound work
        deep below the run (evaluating CEL, matching patterns) stops with BudgetExhausted when
        the budget ends or a signal cancels the run, though nothing passed it the budget."""
        with _governing_lock:
            _governing.append(self)
        try:
            yield
        finally:
            with _governing_lock:
                _governing.remove(self)

    @property
    def interrupted_by(self) -> str | None:
        """The signal that cancelled the run, or None."""
        return self._reason if self._cancelled.is_set() else None

    def why(self) -> str:
        """Why no more work may start (for messages)."""
        if self._cancelled.is_set():
            return f"the run was interrupted ({self._reason})"
        return f"the run's time budget ({self.seconds:g}s) has ended"

    def bound(self, seconds: float) -> float:
        """`seconds` capped by what is left of the budget."""
        return min(seconds, self.remaining())

    def check(self, what: str) -> None:
        """BudgetExhausted when no time is left for `what`."""
        if self.expired:
            raise BudgetExhausted(what, self.why())

    def sleep(self, seconds: float) -> bool:
        """Wait `seconds`, less if the budget ends first, waking at once on cancel. True when
        the whole wait was served (the budget still has time)."""
        wait = self.bound(max(0.0, seconds))
        if wait > 0:
            self._cancelled.wait(wait)
        return not self.expired and wait >= seconds


def checkpoint(what: str) -> None:
    """BudgetExhausted when the budget governing the run (`Budget.governing`) has ended or a
    signal cancelled the run; nothing when no budget governs (a library call, a test). Cheap:
    long CPU-bound loops call it every few hundred steps."""
    try:
        governing = _governing[-1]
    except IndexError:  # none (or the run's last words just ended it)
        return
    governing.check(what)
