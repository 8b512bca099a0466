"""One pass of one controller, of any kind: the flow every kind shares.

The pass checks the budget, lets the kind resolve its resources and pick its parents from the
pass's snapshot (its shard's only), then syncs each parent, `workers` at a time. One parent's
sync is written once here: its result, the errors that stop it (a hook, an answer, a plan, the
API), the budget running out, and the Events for its outcome. The kind supplies only what
differs (`ControllerKind`): what it lists, how it builds its requests, how it plans from the
answers. A DecoratorController's parents are its targets."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, cast

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, is_transient
from reconcile.cluster.protocol import Cluster
from reconcile.config import Shard
from reconcile.engine.children import Dropped, OwnedType
from reconcile.engine.responses import ParentError
from reconcile.engine.status import OBSERVED_GENERATION, pruned_status, schema_keeps
from reconcile.hooks import HookCaller, HookError
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.results import ControllerResult, ParentResult
from reconcile.runner.execute import Executor
from reconcile.runner.keeper import KeepWhole
from reconcile.runner.progress import NoProgress, Progress
from reconcile.runner.resolving import ControllerError, kind_schema
from reconcile.runner.snapshot import Snapshot

Work = TypeVar("Work")
OwnedTypeT = TypeVar("OwnedTypeT", bound=OwnedType[Any])

# What stops one parent's sync and is reported on it (the others go on).
PARENT_ERRORS = (HookError, ParentError, ApiError)


@dataclass(frozen=True)
class PassEnv:
    """What every controller's pass works with: the cluster, the hooks, the run's executor,
    the pass's snapshot, how many parents at a time, the run's budget and its shard."""

    cluster: Cluster
    hooks: HookCaller
    executor: Executor
    snapshot: Snapshot
    workers: int = 1
    budget: Budget = field(default_factory=Budget)
    shard: Shard = field(default_factory=Shard)
    progress: Progress = field(default_factory=NoProgress)
    # per group/resource/version: what the server keeps of its objects, read once a run (None:
    # everything is kept, or nothing is known)
    kind_schemas: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    # what becomes of a parent's result once it is done: kept whole, or its actions' content
    # stowed out of memory for the report (report/spool.py)
    stow: Callable[[ParentResult], None] = field(default_factory=lambda: KeepWhole().stow)

    def kind_schema(self, resource: ResourceInfo) -> Mapping[str, Any] | None:
        """What the server keeps of an object of `resource` (`resolving.kind_schema`)."""
        key = f"{resource.group_resource}/{resource.version}"
        if key not in self.kind_schemas:
            self.kind_schemas[key] = kind_schema(self.cluster, resource)
        return self.kind_schemas[key]

    def parent_schema(self, resource: ResourceInfo) -> Mapping[str, Any] | None:
        """The schema a parent's status write is kept by; a parent whose schema has no
        `status.observedGeneration` is noted once."""
        schema = self.kind_schema(resource)
        if not schema_keeps(schema, ("status", OBSERVED_GENERATION)):
            self.executor.note_dropped_generation(resource.group_resource)
        return schema

    def with_schemas(self, types: Sequence[OwnedTypeT]) -> tuple[OwnedTypeT, ...]:
        """`types`, each with the schema its objects are kept by."""
        return tuple(replace(t, schema=self.kind_schema(t.resource)) for t in types)

    def note_dropped_fields(self, controller: str, dropped: Sequence[Dropped]) -> None:
        """Say once a run which fields of a controller's desired objects their kinds' schemas
        have no place for (they are neither written nor compared)."""
        for item in dropped:
            self.executor.note_dropped_fields(item.resource, controller, list(item.paths))

    def stamps_generation(self, resource: ResourceInfo) -> bool:
        """Whether a parent of `resource` gets status.observedGeneration: its schema keeps it,
        and no status write of this run saw it dropped."""
        keeps = schema_keeps(self.parent_schema(resource), ("status", OBSERVED_GENERATION))
        return keeps and resource.group_resource not in self.executor.drops_generation

    def note_dropped_status(
        self, resource: ResourceInfo, controller: str, status: Mapping[str, Any] | None
    ) -> None:
        """Say once a run which fields of a status to write (a hook's, or a map's aggregated
        one) the parent's schema has no place for: the server would drop them, so they are not
        written (nor compared)."""
        _, dropped = pruned_status(status or {}, self.kind_schema(resource))
        if dropped:
            self.executor.note_dropped_status(resource.group_resource, controller, dropped)


class Refused(Exception):
    """A parent the kind will not sync this pass (reported on it, no Event: nothing was
    tried)."""


class ControllerKind(ABC, Generic[Work]):
    """A controller kind's part of a pass over one controller. `Work` is what one parent's
    sync needs (the parent, and what the kind decided for it while listing)."""

    kind: str  # "CompositeController", ...

    def __init__(
        self,
        env: PassEnv,
        name: str,
        resync_period: float | None,
        controller_object: Obj | None = None,
    ) -> None:
        """`controller_object`: the controller as read from the cluster (None: from a file),
        where its own errors are recorded as Events."""
        self.env = env
        self.name = name
        self.resync_period = resync_period
        self.controller_object = controller_object

    @property
    def where(self) -> str:
        return f"{self.kind} {self.name}"

    @abstractmethod
    def prepare(self, scope: ExitStack) -> list[Work]:
        """Resolve the resources and pick this pass's parents (ControllerError, ApiError:
        the controller does nothing this pass). `scope` closes when the pass ends."""

    @abstractmethod
    def parent(self, work: Work) -> Obj: ...

    @abstractmethod
    def begin(self, work: Work) -> ParentResult:
        """The parent's empty result, naming its mode."""

    @abstractmethod
    def sync(self, work: Work, result: ParentResult) -> None:
        """Call the hooks, plan, execute; raise what stops the parent (PARENT_ERRORS)."""

    def after(self, work: Work, result: ParentResult) -> None:
        """After a sync, before its outcome's Events: the kind's own Events."""


def run_pass(kind: ControllerKind[Work]) -> ControllerResult:
    """Sync every parent of one controller; what stops the controller is its result's error."""
    env = kind.env
    result = ControllerResult(kind.name, resync_period=kind.resync_period, kind=kind.kind)
    with ExitStack() as scope:
        try:
            env.budget.check(kind.where)
            work = kind.prepare(scope)
        except BudgetExhausted:
            result.stopped = True  # the run stopped before this controller's turn
            return result
        except ControllerError as exc:
            _controller_failed(kind, result, str(exc), is_transient(exc.__cause__))
            return result
        except ApiError as exc:
            _controller_failed(kind, result, f"{kind.where}: {exc}", is_transient(exc))
            return result
        env.progress.start(kind.name, len(work))

        def sync(item: Work) -> ParentResult | None:
            if env.budget.expired:
                env.progress.advance(None)
                return None  # counted as not synced: the run is stopping
            synced = sync_parent(kind, item)
            env.progress.advance(synced)
            env.stow(synced)
            return synced

        synced = _fan_out(sync, work, env.workers)
    result.parents = [p for p in synced if p is not None]
    result.not_synced = len(synced) - len(result.parents)
    return result


def _controller_failed(
    kind: ControllerKind[Any], result: ControllerResult, message: str, transient: bool
) -> None:
    """The controller does nothing this pass: the error in the report, and (as Metacontroller
    records it) a Warning SyncError Event on the controller object when it is the cluster's."""
    result.errors.append(message)
    result.transient = transient
    if kind.controller_object is not None:
        kind.env.executor.record_event(kind.controller_object, "SyncError", message)


def sync_parent(kind: ControllerKind[Work], work: Work) -> ParentResult:
    """One parent's sync: the kind's steps, and what any error means for the parent."""
    executor, parent = kind.env.executor, kind.parent(work)
    result = kind.begin(work)
    try:
        kind.sync(work, result)
    except Refused as exc:
        result.errors.append(f"{result.parent}: {exc}")
        return result
    except BudgetExhausted as exc:
        result.interrupt(exc)
        return result
    except PARENT_ERRORS as exc:
        executor.sync_failed(parent, result, str(exc), transient=is_transient(exc))
    except RecursionError:  # input nested deeper than some step can follow: its parent's
        executor.sync_failed(parent, result, "an object nested too deeply to process")
    kind.after(work, result)
    executor.record_outcome(parent, result)
    return result


R = TypeVar("R")


def _fan_out(call: Callable[[Work], R], work: list[Work], workers: int) -> list[R]:
    """`call` on every item, `workers` at a time, the results in the items' order. Each worker
    takes the next item when it is done with one: nothing is queued per item (an executor's
    future per parent, taken all at once, is about 1.8 KB each, 18 MB a pass at 10,000
    parents). A failure (a bug: parents' errors are their results) stops the handing out, and
    is raised once the workers are done."""
    if workers <= 1 or len(work) <= 1:
        return [call(item) for item in work]
    results: list[R | None] = [None] * len(work)
    items = iter(enumerate(work))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        while True:
            with lock:
                taken = None if failures else next(items, None)
            if taken is None:
                return
            index, item = taken
            try:
                results[index] = call(item)
            except BaseException as exc:  # raised in the caller's thread
                with lock:
                    failures.append(exc)

    threads = [
        threading.Thread(target=worker, name=f"parent-{n}", daemon=True)
        for n in range(min(workers, len(work)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return cast(list[R], results)  # every item was done
