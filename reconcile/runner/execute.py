"""Executing a parent's actions in order (or, dry, recording them), and SyncError events."""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from datetime import UTC, datetime

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, NotFound
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Propagation
from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.meta import Obj, metadata, name_of, namespace_of, uid_of
from reconcile.runner.results import ActionResult
from reconcile.secret_values import scrub

log = logging.getLogger(__name__)


class Executor:
    def __init__(self, cluster: Cluster, *, dry_run: bool, budget: Budget | None = None) -> None:
        self.cluster = cluster
        self.dry_run = dry_run
        self.budget = budget or Budget()

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
            try:
                self.budget.check(action.describe())
                returned = self._send(action, versions)
            except (ApiError, BudgetExhausted) as exc:
                results.append(ActionResult(action, applied=False, error=str(exc)))
                stopped = isinstance(exc, BudgetExhausted)
                why = exc.why if isinstance(exc, BudgetExhausted) else "an earlier action failed"
                results += [
                    ActionResult(a, applied=False, error=f"not attempted: {why}")
                    for a in actions[i + 1 :]
                ]
                if stopped:
                    raise exc
                break
            if returned is not None:
                versions[_key(action)] = str(metadata(returned).get("resourceVersion") or "")
            results.append(ActionResult(action, applied=True))
            log.debug("applied %s", action.describe())
        return results

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

    def record_event(self, involved: Obj, reason: str, message: str) -> None:
        """A Warning Event on the object (kubectl describe shows it). Best effort."""
        if self.dry_run or self.budget.expired:
            return
        try:
            events = self.cluster.discover("v1", "events")
            self.cluster.create(events, warning_event(involved, reason, message))
        except (ApiError, BudgetExhausted) as exc:
            log.warning("could not record a %s event on %s: %s", reason, name_of(involved), exc)


def _key(action: Action) -> tuple[str, str, str]:
    return (action.resource.group_resource, action.namespace, action.name)


def warning_event(involved: Obj, reason: str, message: str) -> Obj:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    namespace = namespace_of(involved) or "default"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": f"{name_of(involved)}.",
            "namespace": namespace,
        },
        "involvedObject": {
            k: v
            for k, v in {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": name_of(involved),
                "namespace": namespace_of(involved),
                "uid": uid_of(involved),
                "resourceVersion": metadata(involved).get("resourceVersion"),
            }.items()
            if v
        },
        "reason": reason,
        "message": scrub(message)[:1024],
        "type": "Warning",
        "source": {"component": "reconcile"},
        "reportingComponent": "reconcile",
        "reportingInstance": f"reconcile-{int(time.time())}",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
