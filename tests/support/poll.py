"""Waiting for things without sleeps: poll a condition until a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    check: Callable[[], T | None], *, timeout: float = 30.0, interval: float = 0.05, what: str = ""
) -> T:
    """Call `check` until it returns a truthy value without raising; return that value.

    AssertionError and the cluster's API errors count as "not yet"; the last one is re-raised
    (with `what`) when the deadline passes.
    """
    from reconcile.cluster.errors import ApiError

    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = check()
            if value:
                return value
            last = AssertionError(f"{what or 'condition'} still false")
        except (AssertionError, ApiError) as exc:
            last = exc
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}: {last}") from last
        time.sleep(interval)
        interval = min(interval * 1.5, 0.5)
