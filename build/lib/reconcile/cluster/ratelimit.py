"""A client-side token bucket (QPS with a burst), like client-go's default rate limiter."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from reconcile.budget import Budget, BudgetExhausted


class TokenBucket:
    """Blocks `acquire()` callers so that at most `qps` requests per second go out on average,
    with up to `burst` at once. `qps <= 0` disables the limit."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self, budget: Budget | None = None) -> float:
        """Take one token, sleeping if needed; returns the time waited (seconds). With a
        `budget`, a wait longer than what is left of it raises BudgetExhausted and takes no
        token."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            wait = 0.0 if self._tokens >= 0 else -self._tokens / self.qps
            if budget is not None and wait > 0 and wait > budget.remaining():
                self._tokens += 1.0
                raise BudgetExhausted(
                    f"a request (the rate limit asks to wait {wait:.1f}s)", budget.why()
                )
        if wait > 0:
            self._sleep(wait)
        return wait
