"""What a run keeps of its results while it goes on (`ResultKeeper`).

By default everything, in memory (`KeepWhole`). The command keeps less: once a parent is done,
what its actions' objects are needed for afterwards (the report's diffs) can be stowed away, and
a pass the run is done with can leave memory until the run ends (report/spool.py).
"""

from __future__ import annotations

import threading
from typing import Protocol

from reconcile.results import ControllerResult, ParentResult


class ResultKeeper(Protocol):
    def stow(self, parent: ParentResult) -> None:
        """`parent` is done (called from worker threads): its actions and hook calls are no
        longer needed by the run, only by the reports (the run reads its counts only:
        `ParentResult.writes`, `pending`, `first_transient`)."""

    def park(self, controllers: list[ControllerResult]) -> None:
        """A pass the run is done with until it ends: these controllers' parents may leave
        memory (`controllers[i].parents` emptied) until `restore`."""

    def restore(self) -> None:
        """Every parked controller's parents are back, as they were (a stowed parent's actions
        and hook calls are read back on each use)."""


class KeepWhole:
    """Results kept as they are, in memory."""

    def stow(self, parent: ParentResult) -> None:
        pass

    def park(self, controllers: list[ControllerResult]) -> None:
        pass

    def restore(self) -> None:
        pass


class KeptUntilLarge:
    """Results in memory while they are small, as `KeepWhole` keeps them; once the parents done
    hold more than `limit` actions (their objects are most of what a large run holds), those
    and every later one go to `keeper`, and so do the passes parked from then on. Stowing and
    reading back cost CPU (each parent's actions and hook calls written, compressed, and read
    again for the reports: a tenth of a thousand-parent run's); a run that small never needs
    the memory it saves."""

    def __init__(self, keeper: ResultKeeper, limit: int = 20_000) -> None:
        self._keeper = keeper
        self._limit = limit
        self._lock = threading.Lock()
        self._held: list[ParentResult] = []
        self._actions = 0
        self._large = False

    def stow(self, parent: ParentResult) -> None:
        with self._lock:
            if self._large:
                done = [parent]
            else:
                self._held.append(parent)
                self._actions += len(parent.actions)
                if self._actions <= self._limit:
                    return
                self._large = True
                done, self._held = self._held, []
        for each in done:
            self._keeper.stow(each)

    def park(self, controllers: list[ControllerResult]) -> None:
        if self._large:
            self._keeper.park(controllers)

    def restore(self) -> None:
        self._keeper.restore()
