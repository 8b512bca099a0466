"""Counting API requests by verb and resource, so reports and benchmarks can show a run's cost."""

from __future__ import annotations

import threading
from collections import Counter


class RequestStats:
    """Thread-safe counters of requests sent, keyed by (verb, resource)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._retries: Counter[str] = Counter()
        self._codes: Counter[tuple[str, str]] = Counter()
        self._seconds = 0.0

    def record(self, verb: str, resource: str) -> None:
        with self._lock:
            self._counts[(verb, resource)] += 1

    def record_code(self, verb: str, code: str) -> None:
        """How a request ended: its HTTP status, or "0" when no response came."""
        with self._lock:
            self._codes[(verb, code)] += 1

    def by_verb_and_code(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(sorted(self._codes.items()))

    def add_seconds(self, seconds: float) -> None:
        """Time spent waiting for the server (summed over threads)."""
        with self._lock:
            self._seconds += seconds

    @property
    def seconds(self) -> float:
        with self._lock:
            return self._seconds

    def record_retry(self, verb: str) -> None:
        with self._lock:
            self._retries[verb] += 1

    def by_verb(self) -> dict[str, int]:
        with self._lock:
            totals: Counter[str] = Counter()
            for (verb, _), n in self._counts.items():
                totals[verb] += n
            return dict(sorted(totals.items()))

    def count(self, verb: str | None = None, resource: str | None = None) -> int:
        with self._lock:
            return sum(
                n
                for (v, r), n in self._counts.items()
                if (verb is None or v == verb) and (resource is None or r == resource)
            )

    def snapshot(self) -> Counter[tuple[str, str]]:
        """A copy of the counters, to subtract from a later one."""
        with self._lock:
            return Counter(self._counts)

    def retries(self) -> dict[str, int]:
        with self._lock:
            return dict(self._retries)

    @property
    def total(self) -> int:
        return self.count()

    MUTATING = frozenset({"create", "update", "patch", "delete", "deletecollection"})

    def writes(self) -> int:
        return sum(n for verb, n in self.by_verb().items() if verb in self.MUTATING)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._retries.clear()
            self._codes.clear()
            self._seconds = 0.0
