"""A run: passes until converged or out of budget, then a summary.

A pass lists everything afresh, so every parent is synced every pass. Another pass follows at
once when the last one wrote something, after `poll_interval` when it is waiting on the cluster
(e.g. a child still being deleted), after a short backoff when a request failed for a reason
that may pass, and at the earliest requested resync when that falls inside the budget. A pass
that would not finish within the budget (judging by the slowest so far) is not started.
Resyncs past the budget are reported as due at the next run.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, NotFound
from reconcile.cluster.protocol import Cluster
from reconcile.config import ReconcileSettings
from reconcile.engine.applyset import ApplySetRef
from reconcile.engine.composite.kind import CompositeKind
from reconcile.engine.writes import ApplyStrategy
from reconcile.hooks import HookCaller
from reconcile.hooks.credentials import ObjectReader
from reconcile.objects.meta import Obj
from reconcile.results import ControllerResult, PassResult, RunResult
from reconcile.runner.collector import thaw
from reconcile.runner.contested import contested_parents
from reconcile.runner.controller_pass import Kind, run_pass
from reconcile.runner.execute import Executor
from reconcile.runner.keeper import KeepWhole, ResultKeeper
from reconcile.runner.manifests import LoadedManifests, ManifestApplier, load_manifests
from reconcile.runner.pass_env import PassEnv
from reconcile.runner.preview import PreviewCluster
from reconcile.runner.progress import NoProgress, Progress
from reconcile.runner.schedule import next_pass
from reconcile.runner.snapshot import Snapshot, managers_to_keep
from reconcile.runner.sources import LoadedControllers, load_controllers

if TYPE_CHECKING:
    from reconcile.runner.lock import RunLock

log = logging.getLogger(__name__)


class RunLoop:
    """One run: the lock, the controllers and manifests loaded once, then passes (each a pass of
    every controller, `controller_pass.run_pass`) until converged, out of budget or stopped."""

    def __init__(
        self,
        cluster: Cluster,
        settings: ReconcileSettings,
        *,
        hooks: HookCaller | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        progress: Progress | None = None,
        budget: Budget | None = None,
        keeper: ResultKeeper | None = None,
    ) -> None:
        """`keeper`: what the run keeps of its results while it goes on (by default,
        everything in memory; runner/keeper.py)."""
        self.progress = progress
        self.keeper = keeper or KeepWhole()
        self.cluster = cluster
        self.settings = settings
        self.budget = budget or Budget(settings.max_duration, clock)
        # a caller given is its giver's to close; one made here is closed with the run
        self._owns_hooks = hooks is None
        # a MapController's calls and writes run beside its parents: twice the workers at once
        self.hooks = hooks or HookCaller(
            budget=self.budget,
            pool_size=max(32, 2 * settings.workers + 4),
            read_object=object_reader(cluster),
            allowed_hosts=settings.allowed_hook_hosts,
            workers=max(1, settings.workers),
        )
        self.clock = clock
        # what the server keeps of each kind's objects, read once a run
        self._kind_schemas: dict[str, Mapping[str, Any] | None] = {}
        # Between passes: woken at once by SIGINT / SIGTERM (the budget's cancel).
        self.sleep = sleep or self.budget.sleep

    def _no_controllers(self, loaded: LoadedControllers) -> str:
        """That no controller was found, where the run looked, and `-R` when a directory it
        read has subdirectories it did not."""
        looked = ", ".join(loaded.sources) or "nowhere"
        message = f"no controllers to run: none found in {looked}"
        given = [*self.settings.controller_paths, *self.settings.manifest_paths]
        unread = [
            p
            for p in given
            if not self.settings.recursive
            and Path(p).is_dir()
            and any(child.is_dir() for child in Path(p).iterdir())
        ]
        if unread:
            message += f" (add -R to read the subdirectories of {', '.join(unread)})"
        return message

    def load(self) -> LoadedControllers:
        return load_controllers(
            self.cluster,
            [Path(p) for p in self.settings.controller_paths],
            manifest_paths=[Path(p) for p in self.settings.manifest_paths],
            from_cluster=self.settings.controllers_from_cluster,
            only=self.settings.only_controllers,
            recursive=self.settings.recursive,
            target_selector=self.settings.target_label_selector,
            budget=self.budget,
        )

    def run(self) -> RunResult:
        try:
            # CPU-bound work of every pass (the in-process server checking a write against a
            # CRD's rules and patterns) answers to the budget and the signals too
            with self.budget.governing():
                return self._run()
        finally:
            if self._owns_hooks:
                # no long-lived hook process outlives the run, nor the files OpenSSL read the
                # webhooks' certificates and keys from (taken from Secrets)
                self.hooks.close()
            else:
                self.hooks.stop_processes()  # no long-lived hook process outlives the run

    def _run(self) -> RunResult:
        self._retries = 0
        started = self.clock()
        deadline = started + self.settings.max_duration
        result = RunResult(
            dry_run=self.settings.dry_run, server_dry_run=self.settings.server_dry_run
        )
        if not self.settings.shard.everything:
            result.shard = str(self.settings.shard)
        if self.settings.server_side_apply:
            result.apply_strategy = "server-side"
        try:
            with self.budget.interrupting("reading --manifests"):
                manifests = load_manifests(
                    [Path(p) for p in self.settings.apply_paths],
                    recursive=self.settings.recursive,
                )
        except BudgetExhausted as exc:
            return self._stopped(result, started, str(exc))
        if self.settings.prune and not manifests.objects and not manifests.errors:
            manifests.errors.append(
                f"--prune: the manifests ({', '.join(self.settings.apply_paths)}) hold no "
                "objects; a prune would delete every member of the set"
            )
        if manifests.errors:
            result.load_errors = list(manifests.errors)
            log.error("the manifests cannot be read as given: nothing was changed or pruned")
            return self._stopped(result, started)
        loaded = self._load(result)
        if loaded is None:
            return self._stopped(result, started)
        lock = self._lock(result)
        if lock is None:
            return self._stopped(result, started)
        strategy = ApplyStrategy(
            server_side=self.settings.server_side_apply,
            force_conflicts=self.settings.force_conflicts,
        )
        executor = Executor(
            self.cluster,
            dry_run=self.settings.dry_run,
            server_dry_run=self.settings.server_dry_run,
            budget=self.budget,
            strategy=strategy,
        )
        try:
            return self._locked_run(result, started, deadline, manifests, loaded, lock, executor)
        finally:
            executor.close()
            # within the reserve: a lock left held past a stopped run would skip the next one
            with self.budget.closing():
                lock.release()

    def _lock(self, result: RunResult) -> RunLock | NoLock | None:
        """The run lock, taken; None when the run must not go on (skipped or failed)."""
        if not self.settings.lock or self.settings.dry_run:
            return NoLock()
        from reconcile.runner.lock import take_lock  # --lock runs only

        return take_lock(self.cluster, self.settings.lock, self.settings, result)

    def _locked_run(
        self,
        result: RunResult,
        started: float,
        deadline: float,
        manifests: LoadedManifests,
        loaded: LoadedControllers,
        lock: RunLock | NoLock,
        executor: Executor,
    ) -> RunResult:
        """The run's passes, until it converges, waits past its budget or is stopped."""
        if self.settings.apply_paths:
            result.manifests = self._apply_manifests(manifests, executor)
            for applied in result.manifests.parents:
                self.keeper.stow(applied)
            if _holds_controllers(manifests):  # they may define or change controllers
                loaded = self._load(result) or loaded
        if not loaded.composite and not loaded.decorator and not loaded.map:
            missing = self._no_controllers(loaded)
            if self.settings.controllers_optional:  # `reconcile diff` of plain manifests
                log.info("%s", missing)
            else:
                log.warning("%s", missing)
            if not self.settings.apply_paths and not self.settings.controllers_optional:
                result.warnings.append(missing)  # applying manifests alone is a run of its own
        try:
            self._passes(result, deadline, loaded, lock, executor)
        finally:
            self.keeper.restore()  # the reports read every pass
        result.not_converging = list(executor.not_converging.values())
        result.warnings += sorted(executor.schema_notes)
        return self._finish(result, started)

    def _passes(
        self,
        result: RunResult,
        deadline: float,
        loaded: LoadedControllers,
        lock: RunLock | NoLock,
        executor: Executor,
    ) -> None:
        """Pass after pass, until the run converges, waits past its budget or is stopped."""
        while True:
            if result.passes:
                lock.renew()
            executor.pass_number = len(result.passes) + 1
            current = self._pass(len(result.passes) + 1, loaded, executor)
            if result.manifests is not None and not result.passes:
                current.controllers.insert(0, result.manifests)
            result.passes.append(current)
            if self.budget.interrupted_by or current.not_synced or current.cut_short:
                result.interrupted = self.budget.interrupted_by or "budget"
                log.warning("pass %d stopped: %s", current.number, self.budget.why())
                break
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
            next_at, due, self._retries = next_pass(
                current, self.clock(), self._retries, self.settings.poll_interval
            )
            if next_at is None:
                break
            # A pass is started only when it can finish within the budget, judging by the
            # slowest pass so far: a run that is only waiting ends cleanly, not mid-pass. The
            # work's own end is the budget's (it began before this loop, and keeps a reserve
            # for the report), which is earlier than `deadline`.
            longest = max(p.duration for p in result.passes)
            work_ends = min(deadline, self.clock() + self.budget.remaining())
            if next_at + longest >= work_ends:
                result.due_next_run = due or ["the next pass (it would not finish in the budget)"]
                break
            self.keeper.park(current.controllers)  # done with until the run ends
            self.sleep(max(0.0, next_at - self.clock()))
            if self.budget.interrupted_by:
                result.interrupted = self.budget.interrupted_by
                result.due_next_run = due
                break

    def _load(self, result: RunResult) -> LoadedControllers | None:
        """The controllers; None (with the errors in `result`) when the inputs cannot be used."""
        try:
            loaded = self.load()
        except (ApiError, BudgetExhausted) as exc:
            result.load_errors.append(f"the controllers could not be read from the cluster: {exc}")
            return None
        result.load_errors = list(loaded.fatal) + list(loaded.errors)
        result.warnings = list(loaded.warnings)
        for warning in loaded.warnings:  # errors are logged once, with the run's summary
            log.warning("%s", warning)
        if loaded.fatal:
            log.error("the inputs cannot be read as given: nothing was changed")
            return None
        return loaded

    def _apply_manifests(self, manifests: LoadedManifests, executor: Executor) -> ControllerResult:
        """Apply (or, dry, plan) the manifests; a dry run's controllers then see the cluster as
        the manifests would leave it."""
        namespace, _, name = self.settings.applyset.rpartition("/")
        applier = ManifestApplier(
            self.cluster,
            executor,
            ApplySetRef(namespace or "default", name),
            prune=self.settings.prune,
            prune_allow_shrink=self.settings.prune_allow_shrink,
            prune_cascade=self.settings.prune_cascade,
            dry_run=self.settings.dry_run,
            budget=self.budget,
            page_size=self.settings.page_size,
        )
        applied = applier.run(manifests)
        if self.settings.dry_run:
            # (what the server refused in a --dry-run=server is no part of the change)
            planned = [a.action for p in applied.parents for a in p.actions if not a.error]
            self.cluster = PreviewCluster(self.cluster, planned, applier.new_kinds)
        return applied

    def _finish(self, result: RunResult, started: float) -> RunResult:
        result.duration = self.clock() - started
        result.requests = self.cluster.stats.by_verb()
        result.request_codes = self.cluster.stats.by_verb_and_code()
        result.hook_calls = self.hooks.calls
        last = result.passes[-1] if result.passes else None
        result.converged = last is not None and not (
            last.writes or last.pending or last.waits or result.errors or result.interrupted
        )
        return result

    def _stopped(self, result: RunResult, started: float, error: str = "") -> RunResult:
        """A run that could not start its passes: nothing was written."""
        if error:
            result.load_errors.append(error)
        result.fatal = result.skipped is None
        result.interrupted = self.budget.interrupted_by
        return self._finish(result, started)

    def _pass(self, number: int, loaded: LoadedControllers, executor: Executor) -> PassResult:
        try:
            return self._sync_all(number, loaded, executor)
        finally:
            thaw()  # the snapshot listed this pass was frozen (runner/collector.py)

    def _sync_all(self, number: int, loaded: LoadedControllers, executor: Executor) -> PassResult:
        snapshot = Snapshot(
            self.cluster,
            self.settings.page_size,
            keep_managers=managers_to_keep(executor.strategy.server_side),
        )
        env = PassEnv(
            self.cluster,
            self.hooks,
            executor,
            snapshot,
            max(1, self.settings.workers),
            self.budget,
            self.settings.shard,
            self.progress or NoProgress(),
            self._kind_schemas,
            self.keeper.stow,
        )
        env.progress.new_pass(number)
        started, before = self.clock(), self.cluster.stats.snapshot()
        waited = self.cluster.stats.seconds
        contested = contested_parents(self.cluster, snapshot, loaded.composite)
        kinds: list[Kind] = [CompositeKind(c, contested) for c in loaded.composite]
        # The other kinds' runners (and engines) are imported when a run has such controllers.
        if loaded.decorator:
            from reconcile.engine.decorator.kind import DecoratorKind

            kinds += [DecoratorKind(d) for d in loaded.decorator]
        if loaded.map:
            from reconcile.engine.map_controller.kind import MapKind

            kinds += [MapKind(m) for m in loaded.map]
        result = PassResult(number, [run_pass(env, kind) for kind in kinds])
        result.duration = self.clock() - started
        sent: Counter[str] = Counter()
        for (verb, _), n in (self.cluster.stats.snapshot() - before).items():
            sent[verb] += n
        result.requests = dict(sorted(sent.items()))
        result.request_seconds = self.cluster.stats.seconds - waited
        return result


def _holds_controllers(manifests: LoadedManifests) -> bool:
    return any(
        str(obj.get("apiVersion", "")).startswith("metacontroller.k8s.io/")
        for _, obj in manifests.objects
    )


class NoLock:
    """No `--lock` (or a dry run, which writes nothing): nothing to take or give back."""

    def renew(self) -> None:
        pass

    def release(self) -> None:
        pass


def object_reader(cluster: Cluster) -> ObjectReader:
    """Reads the Secrets and ConfigMaps webhooks' TLS and authentication settings name (once
    each per run: the hook caller keeps what it read)."""

    def read(kind: str, namespace: str, name: str) -> Obj | None:
        resource = cluster.discover("v1", "secrets" if kind == "Secret" else "configmaps")
        try:
            return cluster.get(resource, name, namespace=namespace)
        except NotFound:
            return None

    return read
