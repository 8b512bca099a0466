"""Where a converged run's CPU goes, step by step: `reconcile` run in this process with each
step of a parent's sync wrapped, each wrapper adding the CPU its thread spent in the step
(`time.thread_time`: waits for the network or for another thread are not counted), less what
nested steps took (a LIST made by the first `observe`, a hook call inside the answer's reading).
The figures are written as JSON when the process ends: {label: [calls, CPU seconds]}.

Beside them the benchmark prints the raw client's CPU for the same hook calls (benchmark_floors),
so the steps the raw client has no counterpart for are what a converged run adds to its floor.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (module, attribute path, label), in the order a parent's sync goes through them
STEPS = [
    ("reconcile.runner.snapshot", "Snapshot._list", "LISTs: requests, JSON, indexes"),
    ("reconcile.engine.composite.kind", "CompositeKind.observe", "observe: claims, lookups"),
    ("reconcile.engine.composite.kind", "CompositeKind.requests", "hook request built"),
    ("reconcile.runner.hookcall", "call_hook", "hook call: HTTP, JSON both ways"),
    ("reconcile.runner.hookcall", "HookCalls._call", "answer checked: fields, names, labels"),
    ("reconcile.engine.composite.kind", "CompositeKind.respond", "answers as one response"),
    ("reconcile.engine.composite.kind", "CompositeKind.plan", "plan: children completed, compared"),
    ("reconcile.runner.controller_pass", "_execute", "writes (none when converged)"),
    ("reconcile.runner.execute", "Executor.record_outcome", "outcome recorded"),
    ("reconcile.runner.controller_pass", "sync_parent", "the rest of a parent's sync"),
]

TOTALS: dict[str, list[float]] = {}
_lock = threading.Lock()
_stack = threading.local()  # per thread: the CPU of the nested steps of each open step


def timed_step(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    @functools.wraps(function)
    def step(*args: Any, **kwargs: Any) -> Any:
        nested: list[float] = getattr(_stack, "nested", None) or []
        _stack.nested = nested
        nested.append(0.0)
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent = time.thread_time() - started
            inner = nested.pop()
            if nested:
                nested[-1] += spent  # the enclosing step's own time excludes this one
            with _lock:
                total = TOTALS.setdefault(label, [0, 0.0])
                total[0] += 1
                total[1] += spent - inner

    return step


def run_with_steps(path: Path, args: list[str]) -> None:
    """`reconcile ARGS` in this process, its steps' CPU written to `path` as it ends."""
    for module_name, attribute, label in STEPS:
        owner: Any = importlib.import_module(module_name)
        *parents, name = attribute.split(".")
        for part in parents:
            owner = getattr(owner, part)
        setattr(owner, name, timed_step(getattr(owner, name), label))
    atexit.register(lambda: path.write_text(json.dumps(TOTALS)))
    from reconcile.cli.main import main as reconcile_main

    sys.argv = ["reconcile", *args]
    reconcile_main()


def step_figures(path: Path, process_cpu: float, parents: int) -> dict[str, float]:
    """Each step's CPU per parent in microseconds (`step: LABEL`), the rest of the process
    (start-up, handing parents to the workers, the reports, the exit) in milliseconds."""
    totals: dict[str, list[float]] = json.loads(path.read_text())
    figures = {
        f"step: {label}": totals[label][1] / parents * 1e6
        for _, _, label in STEPS
        if label in totals
    }
    figures["step_rest_ms"] = (process_cpu - sum(t[1] for t in totals.values())) * 1000
    return figures


def print_steps(figures: dict[str, float], raw_client_us: float | None) -> None:
    own = [(k.removeprefix("step: "), v) for k, v in figures.items() if k.startswith("step: ")]
    print("  our converged run's CPU by step, per parent (thread CPU: waits not counted):")
    for label, micros in own:
        print(f"    {label:40s} {micros:7.0f} us")
    beyond = sum(v for k, v in own if not k.startswith(("LISTs", "hook call")))
    print(
        f"    the rest of the process (start-up, handing out parents, reports, exit): "
        f"{figures['step_rest_ms']:.0f} ms"
    )
    if raw_client_us is not None:
        print(
            f"  the raw client's CPU per parent for the same hook call and its JSON: "
            f"{raw_client_us:.0f} us; ours beyond the LISTs and the hook call: {beyond:.0f} us"
        )
