"""Every hook call of a pass, of every kind, is made here (`HookCalls`): each recorded in its
parent's result (outcome, time, code) and its answer read by the kind's parser in the worker
that called it. A parent's several calls (a rollout's revisions, a map's keys) go side by side
on one pool shared by the controller's parents, `workers` at a time; a parent's lone call runs
in the parent's own worker (the pass's fan-out is `workers` wide already): a hand-off to the
pool would cost it about 30 µs of CPU for nothing, 0.3 s a pass at 10,000 parents."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import Any, TypeVar

from reconcile.budget import Budget, BudgetExhausted
from reconcile.engine.flow import HookRequest
from reconcile.engine.responses import ResponseError
from reconcile.hooks import HookCaller, HookError
from reconcile.results import HookCall, Outcome, ParentResult
from reconcile.specs.hooks import HookSpec

T = TypeVar("T")


class HookCalls:
    """The hook calls of a controller's pass."""

    def __init__(self, hooks: HookCaller, workers: int, budget: Budget) -> None:
        self.hooks = hooks
        self.budget = budget
        self._pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="hook")

    def __enter__(self) -> HookCalls:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._pool.shutdown()

    def answers(
        self,
        requests: Sequence[HookRequest[T]],
        result: ParentResult,
        failed: Callable[[str], None] | None = None,
    ) -> list[T | None]:
        """Each request's parsed answer, in order. A call of the parent's own that fails
        (HookError, ResponseError) is raised, once every call is done; a map key's failure is
        handed to `failed` and its answer is None. BudgetExhausted when the run ends first."""
        lone = len(requests) == 1
        futures = [self._start(request, result, lone) for request in requests]
        # Every call is done before anything is raised: none may record into a result that
        # is already finished.
        wait([f for f in futures if f is not None])
        answers: list[T | None] = []
        stop: BaseException | None = None
        for request, future in zip(requests, futures, strict=True):
            if future is None:
                stop = stop or BudgetExhausted(request.what or request.hook.name, self.budget.why())
                answers.append(None)
                continue
            try:
                answers.append(future.result())
            except (HookError, ResponseError) as exc:
                if request.key and failed is not None:
                    failed(f"{request.what}: {exc}")
                else:
                    stop = stop or exc
                answers.append(None)
            except BudgetExhausted as exc:
                stop = stop or exc
                answers.append(None)
        if stop is not None:
            raise stop
        return answers

    def _start(self, request: HookRequest[T], result: ParentResult, lone: bool) -> Future[T] | None:
        """The call under way on the pool (done already when it is a lone one), or None once
        the run's budget is over."""
        if self.budget.expired:
            return None
        if not lone:
            return self._pool.submit(self._call, request, result)
        done: Future[T] = Future()
        try:
            done.set_result(self._call(request, result))
        except BaseException as exc:  # raised where every call's outcome is read
            done.set_exception(exc)
        return done

    def _call(self, request: HookRequest[T], result: ParentResult) -> T:
        return request.parse(call_hook(self.hooks, request.hook, request.body, result))


def call_hook(
    hooks: HookCaller, hook: HookSpec, request: dict[str, Any], result: ParentResult
) -> Any:
    """The hook's response; HookError (recorded too) when the call failed."""
    started = time.monotonic()
    method = "POST" if hook.webhook is not None else "exec"
    try:
        outcome = hooks.call(hook, request)
    except HookError as exc:
        elapsed = time.monotonic() - started
        code = str(exc.status) if exc.status is not None else "0"
        result.hooks.append(
            HookCall(hook.name, hook.target, Outcome.FAILED, elapsed, exc.message, method, code)
        )
        raise
    succeeded = "200" if hook.webhook is not None else "0"  # HTTP OK, or exit status 0
    result.hooks.append(
        HookCall(
            hook.name,
            hook.target,
            Outcome.CACHED if outcome.cached else Outcome.OK,
            outcome.duration,
            method=method,
            code="304" if outcome.cached else succeeded,
        )
    )
    return outcome.response
