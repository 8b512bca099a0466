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


class FixedRate:
    """`--qps N`: a fixed token bucket (0: no limit), as client-go's default limiter. The base
    of AdaptiveRate, which also listens to the answers."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.bucket = TokenBucket(qps, burst, clock=clock, sleep=sleep)

    @property
    def qps(self) -> float:
        return self.bucket.qps

    def acquire(self, budget: Budget | None = None) -> float:
        return self.bucket.acquire(budget)

    def record(self, status: int, seconds: float) -> None:
        """An answer (`status` 0: none) that took `seconds`: a fixed rate ignores it."""


class AdaptiveRate(FixedRate):
    """The default limit: a token bucket whose rate follows the API server (additive growth
    is too slow for a batch run; this doubles and halves). It starts at `start` requests per
    second; every `rate` answers in a row that were neither throttled nor slow (about a second
    of full-speed traffic the server kept up with) double it, up to `ceiling`; a 429, a 503 /
    504 or an answer slower than `slow_seconds` halves it, down to `floor`, at most once a
    second. API Priority and Fairness answers 429 when the server is busy, so a shared cluster
    slows the run down and a healthy one lets it go fast."""

    def __init__(
        self,
        start: float = 50.0,
        burst: int = 100,
        *,
        floor: float = 5.0,
        ceiling: float = 2000.0,
        slow_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(start, burst, clock=clock, sleep=sleep)
        self.floor = floor
        self.ceiling = ceiling
        self.slow_seconds = slow_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._streak = 0
        self._last_decrease = float("-inf")
        self.peak = start

    def record(self, status: int, seconds: float) -> None:
        with self._lock:
            rate = self.bucket.qps
            if status in (429, 503, 504) or seconds >= self.slow_seconds:
                now = self._clock()
                self._streak = 0
                if now - self._last_decrease >= 1.0:
                    self._last_decrease = now
                    self.bucket.qps = max(self.floor, rate / 2)
                return
            if status == 0 or status >= 500:
                return  # an error says nothing about the server's pace
            self._streak += 1
            if self._streak >= max(10.0, rate):
                self._streak = 0
                self.bucket.qps = min(self.ceiling, rate * 2)
                self.peak = max(self.peak, self.bucket.qps)
