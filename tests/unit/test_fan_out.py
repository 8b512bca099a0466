"""One pass's parents, `workers` at a time (runner/controller_pass.py's `_fan_out`): results in
the parents' order, never more at once than asked, and a failure stops the handing out."""

from __future__ import annotations

import threading
import time

import pytest

from reconcile.runner.controller_pass import _fan_out


def test_results_come_in_the_items_order_with_at_most_workers_at_once() -> None:
    lock = threading.Lock()
    running, most = [0], [0]

    def call(item: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.002 * (item % 3))  # finish out of order
        with lock:
            running[0] -= 1
        return item * 10

    assert _fan_out(call, list(range(40)), 4) == [i * 10 for i in range(40)]
    assert 1 < most[0] <= 4
    assert _fan_out(call, [7], 4) == [70]
    assert _fan_out(call, [], 4) == []


def test_a_result_may_be_none() -> None:
    assert _fan_out(lambda item: None if item % 2 else item, [0, 1, 2, 3], 2) == [0, None, 2, None]


def test_a_failure_is_raised_once_the_workers_are_done_and_stops_the_handing_out() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def call(item: int) -> int:
        with lock:
            started.append(item)
        if item == 3:
            raise RuntimeError("a bug")
        time.sleep(0.001)
        return item

    with pytest.raises(RuntimeError, match="a bug"):
        _fan_out(call, list(range(1000)), 2)
    assert 3 in started
    assert len(started) < 20  # nothing much was handed out after it
    assert not [t for t in threading.enumerate() if t.name.startswith("parent-")]  # all done
