"""Executing a parent's actions in order (or, dry, recording them), and SyncError events."""

from __future__ import annotations

import contextlib
import copy
import logging
import threading

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, FieldConflict, NotFound, is_transient
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Propagation
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.changes import FieldChange, field_changes, fingerprint
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj, identity, metadata, name_of
from reconcile.runner.events import change_events, event
from reconcile.runner.results import ActionResult, Divergence, NotConverging, ParentResult

log = logging.getLogger(__name__)


_GUARDED = (ActionKind.UPDATE, ActionKind.STATUS)
# Events a run records at most: a run never floods a namespace, whatever it changes.
MAX_EVENTS_PER_RUN = 200
GuardKey = tuple[str, str, str, str]
NOT_ATTEMPTED = "not attempted"


class Executor:
    """Sends a run's actions. One per run: it is also the loop guard, which remembers each
    object's updates across passes. An update the server accepts without changing the object,
    or the same change needed again in a later pass, marks the object as not converging; its
    updates are then left alone for the rest of the run."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        dry_run: bool,
        budget: Budget | None = None,
        strategy: ApplyStrategy = CLIENT_SIDE,
    ) -> None:
        self.cluster = cluster
        self.dry_run = dry_run
        self.strategy = strategy  # how children are written: the planners ask it too
        self.budget = budget or Budget()
        self.pass_number = 1
        self.not_converging: dict[GuardKey, NotConverging] = {}
        self.events_sent = 0
        self._events_lock = threading.Lock()
        self._updates: dict[GuardKey, tuple[int, str]] = {}

    def execute(
        self, actions: list[Action], results: list[ActionResult] | None = None
    ) -> list[ActionResult]:
        """Run the actions in order; stop at the first failure (later actions assume earlier
        ones happened) or when the run's budget ends. Writes to the same object are chained:
        each one carries the resourceVersion the previous one returned. Results are appended
        to `results` as they happen, so an interrupted run still reports what it applied."""
        results = results if results is not None else []
        versions: dict[tuple[str, str, str], str] = {}
        for i, action in enumerate(actions):
            if self.dry_run:
                results.append(ActionResult(action, applied=False))
                continue
            key = _guard_key(action)
            mark = self._mark(action) if action.kind in _GUARDED else None
            if mark is not None and self._held(action, key, mark):
                stuck = self.not_converging[key]
                why = f"left alone: {stuck.object} does not converge (pass {stuck.pass_number})"
                results.append(ActionResult(action, applied=False, error=why, held=True))
                continue
            try:
                self.budget.check(action.describe())
                returned = self._send(action, versions)
            except FieldConflict as exc:
                # that child's fields belong to another manager: the others still go ahead
                results.append(ActionResult(action, applied=False, error=str(exc)))
                continue
            except (ApiError, BudgetExhausted) as exc:
                results.append(
                    ActionResult(action, applied=False, error=str(exc), transient=is_transient(exc))
                )
                stopped = isinstance(exc, BudgetExhausted)
                why = exc.why if isinstance(exc, BudgetExhausted) else "an earlier action failed"
                results += [
                    ActionResult(a, applied=False, error=f"{NOT_ATTEMPTED}: {why}")
                    for a in actions[i + 1 :]
                ]
                if stopped:
                    raise exc
                break
            if mark is not None:
                # only a change the server accepted can be "needed again" later
                self._updates[key] = (self.pass_number, mark[1])
            if returned is not None:
                versions[_key(action)] = str(metadata(returned).get("resourceVersion") or "")
            unchanged = action.kind in _GUARDED and self._ignored(action, key, returned)
            results.append(ActionResult(action, applied=True, unchanged=unchanged))
            log.debug("applied %s", action.describe())
        return results

    def _mark(self, action: Action) -> tuple[list[FieldChange], str]:
        assert action.after is not None and action.before is not None
        changes = field_changes(
            action.after, action.before, status=action.kind is ActionKind.STATUS
        )
        return changes, fingerprint(changes)

    def _held(self, action: Action, key: GuardKey, mark: tuple[list[FieldChange], str]) -> bool:
        """Whether this update is left alone: its object already does not converge, or it is
        the same change an earlier pass made and the server accepted (which then did not
        stick)."""
        if key in self.not_converging:
            return True
        changes, fingerprint_now = mark
        earlier = self._updates.get(key)
        if earlier is None or earlier[0] == self.pass_number or earlier[1] != fingerprint_now:
            return False
        self._diverged(key, action, Divergence.REVERTED, changes)
        return True

    def _ignored(self, action: Action, key: GuardKey, returned: Obj | None) -> bool:
        """Whether the server kept the object as it was (same resourceVersion)."""
        if returned is None or action.before is None:
            return False
        before = str(metadata(action.before).get("resourceVersion") or "")
        if not before or str(metadata(returned).get("resourceVersion") or "") != before:
            return False
        assert action.after is not None
        changes = field_changes(action.after, returned, status=action.kind is ActionKind.STATUS)
        self._diverged(key, action, Divergence.IGNORED, changes)
        return True

    def _diverged(
        self, key: GuardKey, action: Action, how: Divergence, changes: list[FieldChange]
    ) -> None:
        stuck = NotConverging(identity(action.target), how, tuple(changes), self.pass_number)
        self.not_converging.setdefault(key, stuck)
        log.error("%s", stuck.describe())

    def _send(self, action: Action, versions: dict[tuple[str, str, str], str]) -> Obj | None:
        resource = action.resource
        if action.kind is ActionKind.DELETE:
            with contextlib.suppress(NotFound):  # already gone: what we wanted
                self.cluster.delete(
                    resource,
                    action.name,
                    namespace=action.namespace or None,
                    uid=action.uid or None,
                    propagation=Propagation.BACKGROUND,
                )
            return None
        if action.apply_config is not None:
            return self.cluster.apply(
                resource,
                action.apply_config,
                field_manager=self.strategy.field_manager,
                force=self.strategy.force_conflicts,
            )
        body = action.after
        assert body is not None
        if action.kind is ActionKind.CREATE:
            return self.cluster.create(resource, body)
        if _key(action) in versions:
            body = copy.deepcopy(body)
            body["metadata"]["resourceVersion"] = versions[_key(action)]
        if action.kind is ActionKind.STATUS:
            return self.cluster.update_status(resource, body)
        return self.cluster.update(resource, body)

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
        for failed in result.actions:
            if failed.error and not failed.held and not failed.error.startswith(NOT_ATTEMPTED):
                message = f"{failed.action.describe()} failed: {failed.error}"
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
            self.cluster.create(events, event(involved, reason, message, kind, count))
        except (ApiError, BudgetExhausted) as exc:
            log.warning("could not record a %s event on %s: %s", reason, name_of(involved), exc)


def _key(action: Action) -> tuple[str, str, str]:
    return (action.resource.group_resource, action.namespace, action.name)


def _guard_key(action: Action) -> GuardKey:
    return (*_key(action), action.kind.verb)
