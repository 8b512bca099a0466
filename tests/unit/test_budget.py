"""The run's budget: what is left, bounded waits, cancellation from another thread."""

from __future__ import annotations

import threading
import time

import pytest

from reconcile.budget import Budget, BudgetExhausted
from reconcile.job.app import ExitCode, exit_code
from reconcile.report.model import stop_note
from reconcile.results import ControllerResult, PassResult, RunResult


def test_remaining_and_bound_follow_the_clock() -> None:
    now = [100.0]
    budget = Budget(10, clock=lambda: now[0])
    assert budget.remaining() == 10 and budget.bound(30) == 10 and budget.bound(2) == 2
    now[0] = 115.0
    assert budget.expired and budget.remaining() == 0
    with pytest.raises(BudgetExhausted, match="budget \\(10s\\) has ended"):
        budget.check("GET /api/v1")


def test_cancel_wakes_a_sleeper_at_once() -> None:
    budget = Budget(60)
    threading.Timer(0.2, budget.cancel, args=("SIGTERM",)).start()
    started = time.monotonic()
    assert budget.sleep(30) is False
    assert time.monotonic() - started < 5
    assert budget.interrupted_by == "SIGTERM" and "interrupted (SIGTERM)" in budget.why()
    budget.cancel("SIGINT")
    assert budget.interrupted_by == "SIGTERM", "the first reason is kept"


def test_a_sleep_never_outlasts_the_budget() -> None:
    budget = Budget(0.2)
    started = time.monotonic()
    assert budget.sleep(30) is False
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("interrupted", "errors", "expected"),
    [
        ("SIGINT", [], ExitCode.SIGINT),
        ("SIGTERM", ["x"], ExitCode.SIGTERM),
        ("budget", [], ExitCode.ERROR),
        (None, ["x"], ExitCode.ERROR),
        (None, [], ExitCode.OK),
    ],
)
def test_exit_codes(interrupted: str | None, errors: list[str], expected: ExitCode) -> None:
    result = RunResult(dry_run=False, load_errors=errors, interrupted=interrupted)
    assert exit_code(result) is expected


def test_stop_notes_say_why_and_how_much_was_left() -> None:
    assert stop_note(RunResult(dry_run=False)) is None
    cut = RunResult(dry_run=False, interrupted="budget")
    cut.passes = [PassResult(1, [ControllerResult("c", not_synced=3)])]
    note = stop_note(cut)
    assert note is not None and "time budget" in note and "3 parents not synced" in note
    fatal = stop_note(RunResult(dry_run=False, fatal=True))
    assert fatal is not None and "nothing was changed" in fatal
