"""Progress of a pass, for a progress bar on a terminal (the runner itself prints nothing)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def start(self, description: str, total: int) -> None:
        """A controller's parents are about to be synced."""

    def advance(self) -> None:
        """One parent is done (called from worker threads)."""


class NoProgress:
    def start(self, description: str, total: int) -> None:
        pass

    def advance(self) -> None:
        pass
