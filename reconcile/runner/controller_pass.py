"""One pass of one controller, of any kind: the one flow every kind goes through.

`run_pass` checks the budget, resolves the resources the controller names and selects its
parents from the pass's snapshot (its shard's only), then syncs each parent, `workers` at a
time. `sync_parent` is one parent's sync, the same steps for every kind (`engine/flow.py`):
observe, the customize hook's related objects, the hook requests (on the pass's one pool,
`hookcall.HookCalls`), the answers as one response, the plan, and its execution; then the
parent's result, the errors that stop it (a hook, an answer, a plan, the API), the budget
running out, and the Events for its outcome. The kinds (`engine/composite`,
`engine/decorator`, `engine/map_controller`) supply only pure pieces: what they name, select,
observe, ask and plan. A DecoratorController's parents are its targets."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from reconcile.budget import BudgetExhausted
from reconcile.cluster.errors import ApiError, is_transient
from reconcile.engine.flow import (
    ControllerError,
    Customize,
    HookRequest,
    ParentKind,
    ParentPlan,
    Selected,
)
from reconcile.engine.related import parse_customize_response
from reconcile.engine.responses import ParentError, PlanError
from reconcile.hooks import HookError
from reconcile.objects.meta import Obj, identity
from reconcile.objects.resource import ResourceInfo
from reconcile.results import ControllerResult, ParentResult
from reconcile.runner.hookcall import HookCalls
from reconcile.runner.overlaps import refuse_shared_objects
from reconcile.runner.pass_env import PassEnv
from reconcile.runner.related import related_objects
from reconcile.runner.resolving import resolve
from reconcile.runner.snapshot import PageView

Work = TypeVar("Work")
Kind = ParentKind[Any, Any, Any, Any]

# What stops one parent's sync and is reported on it (the others go on).
PARENT_ERRORS = (HookError, ParentError, ApiError)


def run_pass(env: PassEnv, kind: Kind) -> ControllerResult:
    """Sync every parent of one controller; what stops the controller is its result's error."""
    try:
        return _run_pass(env, kind)
    finally:
        env.snapshot.settle()  # what its background listings raised is not another's


def _run_pass(env: PassEnv, kind: Kind) -> ControllerResult:
    result = ControllerResult(kind.name, resync_period=kind.resync_period, kind=kind.kind)
    with HookCalls(env.hooks, env.workers, env.budget) as calls:
        try:
            env.budget.check(kind.where)
            work = _prepare(env, kind)
        except BudgetExhausted:
            result.stopped = True  # the run stopped before this controller's turn
            return result
        except ControllerError as exc:
            _controller_failed(env, kind, result, str(exc), is_transient(exc.__cause__))
            return result
        except ApiError as exc:
            _controller_failed(env, kind, result, f"{kind.where}: {exc}", is_transient(exc))
            return result
        env.progress.start(kind.name, len(work))

        def sync(item: Selected) -> ParentResult | None:
            if env.budget.expired:
                env.progress.advance(None)
                return None  # counted as not synced: the run is stopping
            synced = sync_parent(env, calls, kind, item)
            env.progress.advance(synced)
            env.stow(synced)
            return synced

        synced = _fan_out(sync, work, env.workers)
    result.parents = [p for p in synced if p is not None]
    result.not_synced = len(synced) - len(result.parents)
    return result


def _prepare(env: PassEnv, kind: Kind) -> list[Selected]:
    """Resolve (ControllerError, ApiError: the controller does nothing this pass), then
    select: the controller's parents in the pass's snapshot, its shard's only."""
    named = kind.named()
    resolved = resolve(env.cluster, kind.where, named, env.kind_schema)
    kind.bind(resolved)
    owned = [n for n in named if n.owned]
    # once a page of a parent (target) type holds a parent the controller selects, its other
    # types are listed alongside
    types = [resolved.found[n.field] for n in named]
    for first in (n for n in named if not n.owned):
        listed = resolved.found[first.field]
        env.snapshot.follow(listed, types, functools.partial(_selects_any, env, kind, listed))
    if owned:
        declared = owned[0].field.split("[", 1)[0]  # spec.childResources
        resources = [resolved.found[n.field] for n in owned]
        refuse_shared_objects(kind.where, declared, resources, env.snapshot)
    return [s for s in kind.select(env.snapshot) if env.shard.owns(s.parent)]


def _selects_any(env: PassEnv, kind: Kind, resource: ResourceInfo, page: list[Obj]) -> bool:
    """Whether the controller would sync a parent among one page of `resource`'s objects."""
    selected = kind.select(PageView(resource, page))
    return any(not s.refused and env.shard.owns(s.parent) for s in selected)


def _controller_failed(
    env: PassEnv, kind: Kind, result: ControllerResult, message: str, transient: bool
) -> None:
    """The controller does nothing this pass: the error in the report, and (as Metacontroller
    records it) a Warning SyncError Event on the controller object when it is the cluster's."""
    result.errors.append(message)
    result.transient = transient
    if kind.controller_object is not None:
        env.executor.record_event(kind.controller_object, "SyncError", message)


def sync_parent(env: PassEnv, calls: HookCalls, kind: Kind, selected: Selected) -> ParentResult:
    """One parent's sync: the steps, and what any error means for the parent."""
    executor, parent = env.executor, selected.parent
    result = ParentResult(kind.name, identity(parent), kind.mode_name(selected.mode))
    if selected.refused:  # nothing is tried: no Event
        result.errors.append(f"{result.parent}: {selected.refused}")
        return result
    try:
        _sync(env, calls, kind, selected, result)
    except BudgetExhausted as exc:
        result.interrupt(exc)
        return result
    except PARENT_ERRORS as exc:
        executor.sync_failed(parent, result, str(exc), transient=is_transient(exc))
    except RecursionError:  # input nested deeper than some step can follow: its parent's
        executor.sync_failed(parent, result, "an object nested too deeply to process")
    if result.rollout is not None and result.rollout.moved:
        executor.record_event(parent, "RolloutStep", result.rollout.describe(), normal=True)
    executor.record_outcome(parent, result)
    return result


def _sync(
    env: PassEnv, calls: HookCalls, kind: Kind, selected: Selected, result: ParentResult
) -> None:
    """The steps after select, in order; raise what stops the parent (PARENT_ERRORS)."""
    parent, resource = selected.parent, selected.resource
    # observe
    seen = kind.observe(selected, env.snapshot, env.facts(resource, kind.stamps_generation))
    # hook requests: the customize hook's related objects first, then the kind's calls, all
    # on the pass's pool; a map key's failed call is that key's error, its other keys go on
    related = _related(env, calls, kind.related(seen), result)
    failed = functools.partial(env.executor.sync_failed, parent, result)
    answers = calls.answers(kind.requests(seen, related), result, failed)
    # the answers as one response (a rollout's revisions merged)
    response = kind.respond(seen, answers)
    result.resync_after = response.resync_after
    env.note_dropped_status(resource, kind.name, response.status)
    # plan, execute
    _execute(env, kind.name, resource, parent, kind.plan(seen, response), result)


def _related(
    env: PassEnv, calls: HookCalls, call: Customize | None, result: ParentResult
) -> Mapping[str, Mapping[str, Obj]]:
    """The objects the customize hook's `relatedResources` ask for (none without a hook)."""
    if call is None:
        return {}
    hook = call.hook
    parse = functools.partial(parse_customize_response, strict=hook.strict)
    (rules,) = calls.answers([HookRequest(hook, call.body, parse)], result)
    assert rules is not None  # a call of the parent's own answers or raises
    return related_objects(
        env.cluster, env.snapshot, rules, call.parent, call.namespaced, uniform=hook.uniform_keys
    )


def _execute(
    env: PassEnv,
    controller: str,
    resource: ResourceInfo,
    parent: Obj,
    plan: ParentPlan,
    result: ParentResult,
) -> None:
    """The plan's writes (or, dry, their record): each plan in order, several side by side;
    a map key's problems are its errors, the parent's own stop it. Then what plans from them."""
    executor = env.executor
    result.rollout = plan.rollout or result.rollout
    env.note_dropped_status(resource, controller, plan.status)
    for part in plan.plans:
        env.note_dropped_fields(controller, part.dropped)
        result.waits += part.waits
        if part.problems and not part.key:
            raise PlanError(parent, part.problems)
        for problem in part.problems:
            executor.sync_failed(parent, result, f"{part.group}: {problem}")
    ready = [part.actions for part in plan.plans if not part.problems and part.actions]
    if len(plan.plans) == 1 and not plan.plans[0].key:
        executor.execute(plan.plans[0].actions, result.actions, together=plan.together)
    elif ready:
        executor.execute_apart(ready, result.actions)
    if plan.then is not None:
        done = [r.action for r in result.actions if not r.error]
        _execute(env, controller, resource, parent, plan.then(done), result)


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
