"""Executing a parent's actions in order (or, dry, recording them), and SyncError events."""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import AlreadyExists, ApiError, FieldConflict, NotFound, is_transient
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Propagation
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.status import drops_observed_generation
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj, metadata, name_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.slim import put_body
from reconcile.results import ActionResult, NotConverging, ParentResult
from reconcile.runner.events import change_events, event, repeated
from reconcile.runner.loop_guard import GuardKey, LoopGuard

log = logging.getLogger(__name__)


NAMESPACES = "namespaces"
CRDS = "customresourcedefinitions.apiextensions.k8s.io"
# Events a run records at most: a run never floods a namespace, whatever it changes.
MAX_EVENTS_PER_RUN = 200
NOT_ATTEMPTED = "not attempted"
EARLIER_FAILED = "an earlier action failed"
# Writes a parent may send at once: to different objects, none depending on another.
_TOGETHER = (ActionKind.CREATE, ActionKind.DELETE, ActionKind.UPDATE)


def failed_writes(actions: Iterable[ActionResult]) -> list[str]:
    """Each write that was sent and refused, as an error of the run: all of them (a server dry
    run sends every write, so several may be refused), never only the first. Writes not sent
    after an earlier failure, and updates the loop guard held, are not errors of their own."""
    return [
        f"{failed.action.describe()} failed: {failed.error}"
        for failed in actions
        if failed.error and failed.attempted and not failed.held
    ]


class Executor:
    """Sends a run's actions. One per run: it keeps the run's loop guard (runner/loop_guard.py),
    which remembers the writes across passes: an update the server accepts without changing
    the object, the same change needed again in a later pass, or an object deleted and created
    again, marks the object as not converging; its writes are then left alone for the rest of
    the run."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        dry_run: bool,
        server_dry_run: bool = False,
        budget: Budget | None = None,
        strategy: ApplyStrategy = CLIENT_SIDE,
        write_concurrency: int = 16,
    ) -> None:
        self.cluster = cluster
        self.dry_run = dry_run or server_dry_run  # nothing is persisted (no Events either)
        # --dry-run=server: every action is sent as a dry run, for the API server to accept
        # or refuse; none stops the next (nothing was persisted), and no loop guard applies
        self.server_dry_run = server_dry_run
        self._writer = cluster.dry_run_view() if server_dry_run else cluster
        self._sends = not self.dry_run or server_dry_run
        self._on_paper = _OnPaper()
        self.strategy = strategy  # how children are written: the planners ask it too
        self.budget = budget or Budget()
        self.pass_number = 1
        self.guard = LoopGuard()
        # what the run learnt of the parents' schemas, said once in the report
        self.schema_notes: set[str] = set()
        self.drops_generation: set[str] = set()  # parents (group/resource) whose schema drops it
        self.events_sent = 0
        self._events_lock = threading.Lock()
        self.write_concurrency = write_concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def not_converging(self) -> dict[GuardKey, NotConverging]:
        """The objects the loop guard found not converging, and left alone."""
        return self.guard.not_converging

    def execute(
        self,
        actions: list[Action],
        results: list[ActionResult] | None = None,
        *,
        together: bool = False,
    ) -> list[ActionResult]:
        """Run the actions in order; stop at the first failure (later actions assume earlier
        ones happened; the parent's status is still written, as Metacontroller does) or when
        the run's budget ends. Writes to the same object are chained:
        each one carries the resourceVersion the previous one returned. Results are appended
        to `results` as they happen, so an interrupted run still reports what it applied.

        `together`: consecutive creates, deletes or updates of different objects (a parent's
        children) are sent at once, up to `write_concurrency`; their order does not matter, and
        a cold run is not held to one request per parent at a time."""
        results = results if results is not None else []
        versions: dict[tuple[str, str, str], str] = {}
        i = 0
        while i < len(actions):
            batch = _independent(actions, i) if together and self._sends else [actions[i]]
            if self.server_dry_run:
                batch = _OnPaper.first_holders(batch)
            if len(batch) == 1:
                outcomes = [self._execute_one(batch[0], versions)]
            else:
                pool = self._writes_pool()
                outcomes = list(pool.map(lambda a: self._execute_one(a, versions), batch))
            i += len(batch)
            failure: BaseException | None = None
            for result, error in outcomes:
                results.append(result)
                failure = failure or error
            if failure is not None:
                stopped = isinstance(failure, BudgetExhausted)
                if self.server_dry_run and not stopped:
                    continue  # nothing was persisted: the actions after it are checked too
                why = failure.why if isinstance(failure, BudgetExhausted) else EARLIER_FAILED
                for action in actions[i:]:
                    if action.kind is ActionKind.STATUS and not stopped:
                        # Metacontroller writes the hook's status whatever became of the
                        # children ("continue to update status regardless")
                        results.append(self._execute_one(action, versions)[0])
                        continue
                    skipped = f"{NOT_ATTEMPTED}: {why}"
                    results.append(
                        ActionResult(action, applied=False, error=skipped, attempted=False)
                    )
                if stopped:
                    raise failure
                break
        return results

    def execute_apart(self, groups: list[list[Action]], results: list[ActionResult]) -> None:
        """Each group's actions in order (`execute`), the groups side by side: none depends on
        another (a MapController's map keys). Results are appended in the groups' order; when
        the run's budget ends, BudgetExhausted once every group is done."""
        pool = self._writes_pool()
        batches: list[tuple[list[ActionResult], Future[list[ActionResult]]]] = []
        for actions in groups:
            done: list[ActionResult] = []
            batches.append((done, pool.submit(self.execute, actions, done)))
        stopped: BudgetExhausted | None = None
        for done, future in batches:
            try:
                future.result()
            except BudgetExhausted as exc:
                stopped = stopped or exc
            results += done
        if stopped is not None:
            raise stopped

    def _execute_one(
        self, action: Action, versions: dict[tuple[str, str, str], str]
    ) -> tuple[ActionResult, BaseException | None]:
        """One action's result, and the error that stops the actions after it (if any)."""
        if self.server_dry_run:
            return self._validate(action)
        if self.dry_run:
            return ActionResult(action, applied=False), None
        guarded = self.guard.before(action, self.pass_number)
        if guarded.held:
            return ActionResult(action, applied=False, error=guarded.held, held=True), None
        try:
            self.budget.check(action.describe())
            returned = self._send(action, versions)
        except FieldConflict as exc:
            # that child's fields belong to another manager: the others still go ahead
            return ActionResult(action, applied=False, error=str(exc)), None
        except (ApiError, BudgetExhausted) as exc:
            failed = ActionResult(
                action, applied=False, error=str(exc), transient=is_transient(exc)
            )
            return failed, exc
        if returned is not None:
            versions[_key(action)] = str(metadata(returned).get("resourceVersion") or "")
        if action.kind is ActionKind.STATUS and drops_observed_generation(action.after, returned):
            self.note_dropped_generation(action.resource.group_resource)
        unchanged = self.guard.after(guarded, action, returned, self.pass_number)
        log.debug("applied %s", action.describe())
        return ActionResult(action, applied=True, unchanged=unchanged), None

    def _validate(self, action: Action) -> tuple[ActionResult, BaseException | None]:
        """--dry-run=server: the action sent as a dry run. Accepted, it is pending and
        validated; refused, it fails with the server's answer. One whose object, namespace or
        kind this dry run created only on paper is not sent: the server would not find it."""
        why = self._on_paper.holds(action)
        if why is not None:
            return ActionResult(action, applied=False, not_validated=why), None
        try:
            self.budget.check(action.describe())
            returned = self._send(action, {})
        except (ApiError, BudgetExhausted) as exc:
            failed = ActionResult(
                action, applied=False, error=str(exc), transient=is_transient(exc)
            )
            return failed, exc
        self._on_paper.sent(action)
        if action.kind is ActionKind.STATUS and drops_observed_generation(action.after, returned):
            self.note_dropped_generation(action.resource.group_resource)
        log.debug("validated %s", action.describe())
        return ActionResult(action, applied=False, validated=True), None

    def _writes_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.write_concurrency, thread_name_prefix="write")
            return self._pool

    def note_dropped_generation(self, group_resource: str) -> None:
        """The parents of `group_resource` get no status.observedGeneration: their schema
        drops it (said once in the report)."""
        self.drops_generation.add(group_resource)
        self.schema_notes.add(
            f"{group_resource}: the status schema has no observedGeneration, which reconcile "
            "would add; it is not written"
        )

    def note_dropped_status(self, group_resource: str, controller: str, paths: list[str]) -> None:
        """Fields of a controller's status (its hook's, or a map's aggregated one) that the
        parent's schema has no place for (said once a run per controller and fields)."""
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        self.schema_notes.add(
            f"{group_resource}: the status schema has no place for {shown}, which "
            f"{controller} would write; the API server would drop them, so they are not written"
        )

    def note_dropped_fields(
        self, resource: ResourceInfo, controller: str, paths: list[str]
    ) -> None:
        """Fields of a controller's desired objects that their kind's schema has no place for
        (said once a run per controller, kind and fields)."""
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        self.schema_notes.add(
            f"{resource.kind} ({resource.api_version}): the schema has no place for {shown}, "
            f"which {controller}'s hook returns; the API server would drop them, so they are "
            "not written"
        )

    def close(self) -> None:
        """Let the writers' threads go (the run is over)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None

    def _send(self, action: Action, versions: dict[tuple[str, str, str], str]) -> Obj | None:
        resource, cluster = action.resource, self._writer
        if action.kind is ActionKind.DELETE:
            with contextlib.suppress(NotFound):  # already gone: what we wanted
                cluster.delete(
                    resource,
                    action.name,
                    namespace=action.namespace or None,
                    uid=action.uid or None,
                    propagation=Propagation.BACKGROUND,
                )
            return None
        if action.apply_config is not None:
            return cluster.apply(
                resource,
                action.apply_config,
                field_manager=self.strategy.field_manager,
                force=self.strategy.force_conflicts,
            )
        body = action.after
        assert body is not None
        if action.kind is ActionKind.CREATE:
            return cluster.create(resource, body)
        # Listed objects keep some managedFields entries only: sent, they would replace the list.
        body = put_body(action.before, body)
        if _key(action) in versions:
            body = copy.deepcopy(body)
            body["metadata"]["resourceVersion"] = versions[_key(action)]
        if action.kind is ActionKind.STATUS:
            return cluster.update_status(resource, body)
        return cluster.update(resource, body)

    def sync_failed(
        self, involved: Obj, result: ParentResult, message: str, *, transient: bool = False
    ) -> None:
        """A parent (or target, or map key) that could not be synced: the error in its result,
        the log, and a SyncError Event on it. `transient`: worth another pass."""
        result.errors.append(f"{result.parent}: {message}")
        result.transient = result.transient or transient
        log.warning("%s: %s", result.parent, message)
        self.record_event(involved, "SyncError", message)

    def record_outcome(self, involved: Obj, result: ParentResult) -> None:
        """After a sync: Normal Events for what it changed, and a SyncError for each write
        that failed (held updates are the loop guard's, reported once by the run)."""
        for reason, message, count in change_events(involved, result.actions):
            self.record_event(involved, reason, message, normal=True, count=count)
        for message in failed_writes(result.actions):
            result.errors.append(f"{result.parent}: {message}")
            self.record_event(involved, "SyncError", message)

    def record_event(
        self,
        involved: Obj,
        reason: str,
        message: str,
        *,
        normal: bool = False,
        count: int = 1,
    ) -> None:
        """An Event on the object (kubectl describe shows it): a Warning, or with `normal` a
        Normal one. Best effort, and at most MAX_EVENTS_PER_RUN per run."""
        if self.dry_run or self.budget.expired:
            return
        with self._events_lock:
            self.events_sent += 1
            if self.events_sent > MAX_EVENTS_PER_RUN:
                if self.events_sent == MAX_EVENTS_PER_RUN + 1:
                    log.warning("%d events recorded: no more this run", MAX_EVENTS_PER_RUN)
                return
        kind = "Normal" if normal else "Warning"
        try:
            events = self.cluster.discover("v1", "events")
            body = event(involved, reason, message, kind, count)
            try:
                self.cluster.create(events, body)
            except AlreadyExists:  # the same Event as before: counted on the existing one
                meta = body["metadata"]
                stored = self.cluster.get(events, meta["name"], namespace=meta["namespace"])
                self.cluster.update(events, repeated(stored, body))
        except (ApiError, BudgetExhausted) as exc:
            log.warning("could not record a %s event on %s: %s", reason, name_of(involved), exc)


class _OnPaper:
    """What a server dry run created or changed only on paper (the server accepted the write
    and stored nothing). A later change to an object created so, or a create in such a
    namespace, would only meet NotFound; an object of a CRD created or changed so would be
    checked against a schema that is not the one the run decided with. Those actions are
    reported as not validated."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: set[tuple[str, str, str]] = set()
        self._namespaces: set[str] = set()
        self._kinds: dict[str, str] = {}  # group_resource of a CRD -> "created" / "changed"

    def sent(self, action: Action) -> None:
        """`action` was accepted as a dry run."""
        group_resource = action.resource.group_resource
        with self._lock:
            if action.kind is ActionKind.CREATE:
                self._objects.add(_key(action))
                if group_resource == NAMESPACES:
                    self._namespaces.add(action.name)
            if group_resource == CRDS and action.kind is not ActionKind.DELETE:
                created = action.kind is ActionKind.CREATE
                self._kinds.setdefault(action.name, "created" if created else "changed")

    @staticmethod
    def first_holders(batch: list[Action]) -> list[Action]:
        """The batch up to its first create of a Namespace or CRD, included: what follows may
        go in it, and is checked once it is known to exist on paper only."""
        for index, action in enumerate(batch):
            group_resource = action.resource.group_resource
            if action.kind is ActionKind.CREATE and group_resource in (NAMESPACES, CRDS):
                return batch[: index + 1]
        return batch

    def holds(self, action: Action) -> str | None:
        """Why the server cannot check this action (None: it can)."""
        with self._lock:
            how = self._kinds.get(action.resource.group_resource)
            if how is not None:
                what = f"its CustomResourceDefinition {action.resource.group_resource}"
                return f"{what} is {how} by this dry run only"
            if action.namespace and action.namespace in self._namespaces:
                what = f"its namespace {action.namespace}"
            elif action.kind is not ActionKind.CREATE and _key(action) in self._objects:
                what = "the object"
            else:
                return None
        return f"{what} is created by this dry run only"


def _independent(actions: list[Action], start: int) -> list[Action]:
    """The run of actions from `start` that may go at once: of one kind (create, delete or
    update), each to a different object."""
    first = actions[start]
    if first.kind not in _TOGETHER:
        return [first]
    seen = {_key(first)}
    end = start + 1
    while end < len(actions) and actions[end].kind is first.kind and _key(actions[end]) not in seen:
        seen.add(_key(actions[end]))
        end += 1
    return actions[start:end]


def _key(action: Action) -> tuple[str, str, str]:
    return (action.resource.group_resource, action.namespace, action.name)
