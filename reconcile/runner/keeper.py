"""What a run keeps of its results while it goes on (`ResultKeeper`).

By default everything, in memory (`KeepWhole`). The command keeps less: once a parent is done,
what its actions' objects are needed for afterwards (the report's diffs) can be stowed away, and
a pass the run is done with can leave memory until the run ends (report/spool.py).
"""

from __future__ import annotations

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
