"""Calling a hook for one parent or target, and recording the call (outcome, time, code) in its
result: the same for CompositeController and DecoratorController passes."""

from __future__ import annotations

import time
from typing import Any

from reconcile.hooks import HookCaller, HookError
from reconcile.results import HookCall, Outcome, ParentResult
from reconcile.specs.hooks import HookSpec


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
