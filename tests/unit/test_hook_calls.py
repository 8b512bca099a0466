"""Every hook call of a pass (reconcile.runner.hookcall), with real local commands: answers in
the requests' order, read by each request's parser; a map key's failure is that key's, a call
of the parent's own stops the parent, and only once every call is done and recorded; a lone
call runs in its parent's worker, several on the pool; nothing is called once the run's budget
is over."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from reconcile.budget import Budget, BudgetExhausted
from reconcile.engine.flow import HookRequest
from reconcile.engine.responses import ResponseError
from reconcile.hooks import HookCaller, HookError
from reconcile.results import Outcome, ParentResult
from reconcile.runner.hookcall import HookCalls
from reconcile.specs.hooks import CommandSpec, HookSpec

ECHO = "import json, sys; print(json.dumps({'got': json.load(sys.stdin)['n']}))"


def hook(name: str, code: str = ECHO) -> HookSpec:
    command = CommandSpec((sys.executable, "-c", code))
    return HookSpec(name=name, owner="MapController m", command=command)


def got(answer: Any) -> int:
    if answer.get("got") == 13:
        raise ResponseError("map", ["got: 13 is unlucky"])
    return int(answer["got"])


def request(n: int, key: str = "", spec: HookSpec | None = None) -> HookRequest[int]:
    return HookRequest(spec or hook("map"), {"n": n}, got, key=key, what=f"call {n}")


def test_answers_come_in_order_and_a_keys_failure_is_its_own() -> None:
    result = ParentResult("m", "Thing ns/p", "map")
    failed: list[str] = []
    broken = hook("map", "import sys; sys.exit(3)")
    requests = [request(1, "a"), request(13, "b"), request(2, "c", broken), request(3, "d")]
    with HookCalls(HookCaller(), 2, Budget()) as calls:
        answers = calls.answers(requests, result, failed.append)
    assert answers == [1, None, None, 3]
    assert failed[0] == "call 13: map hook response: got: 13 is unlucky"
    assert failed[1].startswith("call 2: ") and len(failed) == 2
    outcomes = sorted(call.outcome.value for call in result.hooks)
    assert outcomes == sorted([Outcome.OK.value] * 3 + [Outcome.FAILED.value])


def test_a_call_of_the_parents_own_stops_it_once_every_call_is_recorded() -> None:
    result = ParentResult("c", "Thing ns/p", "sync")
    slow = hook("sync", "import json, sys, time; time.sleep(0.3); print('{\"got\": 1}')")
    broken = hook("sync", "import sys; sys.exit(3)")
    with HookCalls(HookCaller(), 2, Budget()) as calls, pytest.raises(HookError):
        calls.answers([request(0, spec=broken), request(1, spec=slow)], result)
    # the slow call was done and recorded before the failure was raised
    assert len(result.hooks) == 2


def test_nothing_is_called_once_the_budget_is_over() -> None:
    budget = Budget(0.0)
    result = ParentResult("m", "Thing ns/p", "map")
    with HookCalls(HookCaller(), 2, budget) as calls, pytest.raises(BudgetExhausted) as stopped:
        calls.answers([request(1, "a")], result, lambda message: None)
    assert "call 1" in str(stopped.value)
    assert result.hooks == []


def test_a_lone_call_runs_in_its_parents_worker_and_several_on_the_pool() -> None:
    threads: list[str] = []

    def where(answer: Any) -> int:
        threads.append(threading.current_thread().name)
        return got(answer)

    result = ParentResult("m", "Thing ns/p", "map")
    with HookCalls(HookCaller(), 2, Budget()) as calls:
        assert calls.answers([HookRequest(hook("sync"), {"n": 1}, where)], result) == [1]
        assert threads == [threading.current_thread().name]
        several = [HookRequest(hook("map"), {"n": n}, where, key=str(n)) for n in (2, 3)]
        assert calls.answers(several, result, lambda message: None) == [2, 3]
    assert all(name.startswith("hook") for name in threads[1:]) and len(threads) == 3
