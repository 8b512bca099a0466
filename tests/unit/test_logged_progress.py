"""The progress line a long pass logs off a terminal."""

from __future__ import annotations

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.resource import ResourceInfo
from reconcile.results import ActionResult, HookCall, Outcome, ParentResult
from reconcile.runner.progress import LoggedProgress

CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)


def parent(writes: int, errors: int, hook_seconds: float) -> ParentResult:
    made = Action(ActionKind.CREATE, CONFIGMAPS, None, {"kind": "ConfigMap"}, "new")
    return ParentResult(
        "greeter",
        "Greeting ns/p",
        "sync",
        hooks=[HookCall("sync", "python3 hook.py", Outcome.OK, hook_seconds)],
        actions=[ActionResult(made, applied=True) for _ in range(writes)],
        errors=["boom"] * errors,
    )


def test_the_line_counts_the_pass_so_far() -> None:
    now = [100.0]
    progress = LoggedProgress(10, clock=lambda: now[0])
    assert progress.line() is None  # nothing syncing
    progress.new_pass(2)
    progress.start("greeter", 4)
    progress.advance(parent(2, 0, 0.25))
    progress.advance(parent(1, 1, 0.5))
    progress.advance(None)  # skipped: the run is stopping
    now[0] = 112.4
    assert progress.line() == (
        "pass 2, 12s: greeter 3 of 4 parents; this pass 2 parents, 3 writes, 1 errors, hooks 0.8s"
    )
    progress.advance(parent(0, 0, 0))
    assert progress.line() is None  # the controller is done: nothing to say until the next
    progress.new_pass(3)
    progress.start("greeter", 1)
    assert progress.line() == (
        "pass 3, 0s: greeter 0 of 1 parents; this pass 0 parents, 0 writes, 0 errors, hooks 0.0s"
    )
