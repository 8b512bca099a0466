"""The text report is compact by default: a converged run of many parents fits a screen, and
an error is told once where it happened and once in the summary; --verbose tells all."""

from __future__ import annotations

from reconcile.report.render import ReportFormat, render
from reconcile.results import (
    ControllerResult,
    HookCall,
    Outcome,
    ParentResult,
    PassResult,
    RunResult,
)

FAILURE = "sync hook python3 hooks.py: exited with status 1: the hook failed on purpose"


def in_sync(i: int) -> ParentResult:
    return ParentResult(
        "greeter",
        f"Greeting team/p-{i:03d}",
        "sync",
        hooks=[HookCall("sync", "python3 hooks.py", Outcome.OK, 0.05, method="exec", code="0")],
    )


def converged(parents: list[ParentResult]) -> RunResult:
    controller = ControllerResult("greeter", parents, kind="CompositeController")
    result = RunResult(dry_run=False, passes=[PassResult(1, [controller])], converged=True)
    result.requests = {"list": 4}
    return result


def test_a_converged_run_of_a_hundred_parents_fits_in_twenty_lines() -> None:
    result = converged([in_sync(i) for i in range(100)])
    text = render(result, ReportFormat.TEXT)
    assert len(text.splitlines()) < 20, text
    assert "= 100 parents in sync" in text
    full = render(result, ReportFormat.TEXT, verbose=True)
    assert full.count("Greeting team/p-") == 100 and full.count("hook sync ok") == 100


def test_an_error_is_told_where_it_happened_and_in_the_summary() -> None:
    failed = ParentResult(
        "greeter",
        "Greeting team/broken",
        "sync",
        hooks=[HookCall("sync", "python3 hooks.py", Outcome.FAILED, 0.1, error=FAILURE, code="1")],
        errors=[f"Greeting team/broken: {FAILURE}"],
    )
    result = converged([in_sync(1), failed, in_sync(2)])
    result.converged = False
    text = render(result, ReportFormat.TEXT)
    assert text.count("the hook failed on purpose") == 2, text
    assert "hook sync failed" in text  # which call failed, without its error again
    assert "= 2 parents in sync" in text
    assert text.count("the hook failed on purpose") < render(
        result, ReportFormat.TEXT, verbose=True
    ).count("the hook failed on purpose")
