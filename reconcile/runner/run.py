"""A run: passes until converged or out of budget, then a summary.

A pass lists everything afresh, so every parent is synced every pass. Another pass follows at
once when the last one wrote something, after `poll_interval` when it is waiting on the cluster
(e.g. a child still being deleted), and at the earliest requested resync when that falls inside
the budget. Resyncs past the budget are reported as due at the next run.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from reconcile.cluster.protocol import Cluster
from reconcile.config import ReconcileSettings
from reconcile.hooks import HookCaller
from reconcile.runner.composite import CompositeRunner
from reconcile.runner.execute import Executor
from reconcile.runner.progress import Progress
from reconcile.runner.results import PassResult, RunResult
from reconcile.runner.snapshot import Snapshot
from reconcile.runner.sources import LoadedControllers, load_controllers

log = logging.getLogger(__name__)


class Runner:
    def __init__(
        self,
        cluster: Cluster,
        settings: ReconcileSettings,
        *,
        hooks: HookCaller | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        progress: Progress | None = None,
    ) -> None:
        self.progress = progress
        self.cluster = cluster
        self.settings = settings
        self.hooks = hooks or HookCaller()
        self.clock = clock
        self.sleep = sleep

    def load(self) -> LoadedControllers:
        return load_controllers(
            self.cluster,
            [Path(p) for p in self.settings.controller_paths],
            manifest_paths=[Path(p) for p in self.settings.manifest_paths],
            from_cluster=self.settings.controllers_from_cluster,
            only=self.settings.only_controllers,
            recursive=self.settings.recursive,
        )

    def run(self) -> RunResult:
        started = self.clock()
        deadline = started + self.settings.max_duration
        result = RunResult(dry_run=self.settings.dry_run)
        loaded = self.load()
        result.load_errors = list(loaded.errors)
        for error in loaded.errors:
            log.error("%s", error)
        if not loaded.composite:
            log.warning("no controllers to run (sources: %s)", ", ".join(loaded.sources) or "none")
        executor = Executor(self.cluster, dry_run=self.settings.dry_run)
        while True:
            current = self._pass(len(result.passes) + 1, loaded, executor)
            result.passes.append(current)
            log.info(
                "pass %d: %d parents, %d writes, %d errors",
                current.number,
                len(current.parents()),
                current.writes,
                len(current.errors),
                extra={"seconds": round(current.duration, 3), "requests": current.requests},
            )
            if self.settings.dry_run:
                break  # later passes would depend on writes that were not made
            next_at, due = self._next_pass_at(current, self.clock())
            if next_at is None:
                break
            if next_at >= deadline:
                result.due_next_run = due
                break
            self.sleep(max(0.0, next_at - self.clock()))
        result.duration = self.clock() - started
        result.requests = self.cluster.stats.by_verb()
        result.hook_calls = self.hooks.calls
        last = result.passes[-1]
        result.converged = not (last.writes or last.pending or last.waits or result.errors)
        return result

    def _pass(self, number: int, loaded: LoadedControllers, executor: Executor) -> PassResult:
        snapshot = Snapshot(self.cluster, self.settings.page_size)
        runner = CompositeRunner(
            self.cluster, self.hooks, executor, snapshot, self.settings.workers, self.progress
        )
        started, before = self.clock(), self.cluster.stats.snapshot()
        waited = self.cluster.stats.seconds
        result = PassResult(number, [runner.run(c) for c in loaded.composite])
        result.duration = self.clock() - started
        sent: Counter[str] = Counter()
        for (verb, _), n in (self.cluster.stats.snapshot() - before).items():
            sent[verb] += n
        result.requests = dict(sorted(sent.items()))
        result.request_seconds = self.cluster.stats.seconds - waited
        return result

    def _next_pass_at(self, current: PassResult, now: float) -> tuple[float | None, list[str]]:
        """When the next pass should start (None: converged) and which resyncs ask for it."""
        if current.writes:
            return now, []
        candidates: list[tuple[float, str]] = []
        if current.waits:
            candidates.append((now + self.settings.poll_interval, "waiting: " + current.waits[0]))
        for controller in current.controllers:
            if controller.resync_period:
                candidates.append(
                    (
                        now + controller.resync_period,
                        f"CompositeController {controller.name}: resyncPeriodSeconds "
                        f"{controller.resync_period:g}",
                    )
                )
            for parent in controller.parents:
                if parent.resync_after:
                    candidates.append(
                        (
                            now + parent.resync_after,
                            f"{parent.parent}: resyncAfterSeconds {parent.resync_after:g}",
                        )
                    )
        if not candidates:
            return None, []
        candidates.sort()
        return candidates[0][0], [what for _, what in candidates]
