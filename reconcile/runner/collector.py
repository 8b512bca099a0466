"""The cyclic garbage collector while a pass lists the cluster.

A snapshot is millions of small dicts, lists and strings decoded from JSON: acyclic data that
reference counting frees. The cyclic collector can free none of it, yet while the snapshot
grows it traverses all of it again and again (a full collection each time the heap has grown
by a quarter): 2.1 s of a 7.3 s steady run at 10,000 parents x 5 children. So listing runs with
the collector paused, and what is in memory afterwards is frozen (`gc.freeze`: out of the
collector's sight, still freed by reference counting) until the pass ends and `thaw` gives it
back, so that any cycles among it can still be collected.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Pause:
    """Paused while at least one thread lists; resumed as it was before the first one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listing = 0
        self.was_enabled = False


_pause = _Pause()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside; afterwards, what is in memory is frozen."""
    with _pause.lock:
        if _pause.listing == 0:
            _pause.was_enabled = gc.isenabled()
            gc.disable()
        _pause.listing += 1
    try:
        yield
    finally:
        with _pause.lock:
            _pause.listing -= 1
            if _pause.listing == 0:
                gc.freeze()
                if _pause.was_enabled:
                    gc.enable()


def thaw() -> None:
    """At the end of a pass: what was frozen is the collector's again."""
    gc.unfreeze()
