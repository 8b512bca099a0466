"""When the next pass starts (runner/schedule.py), decided from the last pass alone: at once after
writes, after a doubling backoff while requests fail for reasons that may pass (five times in a
row at most), after the poll interval while waiting, at the earliest resync, never once
converged."""

from __future__ import annotations

import pytest

from reconcile.results import ControllerResult, ParentResult, PassResult, StowedParent
from reconcile.runner.schedule import MAX_RETRY_PASSES, next_pass

NOW, POLL = 100.0, 2.0


def parent(
    writes: int = 0,
    waits: tuple[str, ...] = (),
    resync_after: float | None = None,
    transient: str | None = None,
) -> ParentResult:
    done = ParentResult("c", "Thing ns/p", "sync", waits=list(waits), resync_after=resync_after)
    done.stowed = StowedParent(writes, 0, transient)
    return done


def one_pass(*parents: ParentResult, resync_period: float | None = None) -> PassResult:
    controller = ControllerResult(
        "c", list(parents), resync_period=resync_period, kind="CompositeController"
    )
    return PassResult(1, [controller])


def test_a_converged_pass_ends_the_run() -> None:
    assert next_pass(one_pass(parent()), NOW, 0, POLL) == (None, [], 0)


def test_writes_start_the_next_pass_at_once_and_reset_the_retries() -> None:
    assert next_pass(one_pass(parent(writes=2)), NOW, 3, POLL) == (NOW, [], 0)


def test_a_wait_polls() -> None:
    found = next_pass(one_pass(parent(waits=("Pod ns/a not ready",))), NOW, 0, POLL)
    assert found == (NOW + POLL, ["waiting: Pod ns/a not ready"], 0)


@pytest.mark.parametrize(("retries", "delay"), [(0, 0.5), (1, 1.0), (3, 4.0), (4, 8.0)])
def test_a_transient_failure_backs_off_doubling(retries: int, delay: float) -> None:
    failed = one_pass(parent(transient="update ConfigMap ns/a: 503"))
    next_at, due, after = next_pass(failed, NOW, retries, POLL)
    assert (next_at, after) == (NOW + delay, retries + 1)
    assert due == ["retrying after a transient failure: update ConfigMap ns/a: 503"]


def test_retries_stop_after_five_in_a_row() -> None:
    failed = one_pass(parent(transient="update ConfigMap ns/a: 503"))
    assert next_pass(failed, NOW, MAX_RETRY_PASSES, POLL) == (None, [], MAX_RETRY_PASSES)


def test_the_earliest_resync_starts_the_next_pass_and_all_are_listed_in_time_order() -> None:
    done = one_pass(parent(resync_after=10), resync_period=30)
    assert next_pass(done, NOW, 0, POLL) == (
        NOW + 10,
        [
            "Thing ns/p: resyncAfterSeconds 10",
            "CompositeController c: resyncPeriodSeconds 30",
        ],
        0,
    )
