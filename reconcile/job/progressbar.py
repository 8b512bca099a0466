"""A progress bar on standard error, for long runs on a terminal."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from reconcile.results import ParentResult


class TerminalProgress:
    """Implements `reconcile.runner.progress.Progress` with a rich bar per controller."""

    def __init__(self) -> None:
        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task: TaskID | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> TerminalProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def new_pass(self, number: int) -> None:
        pass

    def start(self, description: str, total: int) -> None:
        with self._lock:
            if self._task is not None:
                self._bar.remove_task(self._task)
            self._task = self._bar.add_task(description, total=total)

    def advance(self, parent: ParentResult | None = None) -> None:
        with self._lock:
            if self._task is not None:
                self._bar.advance(self._task)
