#!/usr/bin/env python3
"""Reliability figures: API faults, kills anywhere, hostile hooks. Prints figures; not a test
(the suite runs small versions of each: tests/integration/test_faults.py and
tests/unit/test_hostile_hooks.py).

    .venv/bin/python scripts/faults.py api   [--backend memory|live|both] [--rate 0.1]
    .venv/bin/python scripts/faults.py kill  [--backend ...] [--points 100]
    .venv/bin/python scripts/faults.py hooks [--cases 2000]
    .venv/bin/python scripts/faults.py all

api:   one request in ten (--rate) answered with 409, 429 + Retry-After, 500, 503, a connection
       reset or an answer later than --request-timeout, some of them after the write was done
       (live: a proxy in front of the real kube-apiserver; memory: a faulty Cluster wrapper).
       Each scenario runs until a clean dry run finds nothing to do, at most 3 runs.
kill:  runs of the statefulset-like example (rollouts and finalizations) die at a random write,
       before it or just after it (live: SIGKILL of the real command by the proxy).
hooks: the property tests of every response parser and planner, with --cases cases each.
The live backend uses the test control plane (tests/support/controlplane.py), built on first use.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.backends import Backend  # noqa: E402
from tests.support.faults import FaultPlan  # noqa: E402


@contextmanager
def backends(which: str) -> Iterator[list[Backend]]:
    from reconcile.cluster.kubeconfig import load_connection
    from reconcile.cluster.live import LiveCluster
    from reconcile.cluster.memory import MemoryCluster
    from tests.support.controlplane import (
        ADMIN_USER,
        CURRENT_RELEASE,
        TESTED_USER,
        ControlPlane,
        build,
    )

    found: list[Backend] = []
    if which in ("memory", "both"):
        store = MemoryCluster(kubernetes_version=CURRENT_RELEASE)
        found.append(Backend("memory", cluster=store.with_own_stats(), admin=store))
    plane = None
    if which in ("live", "both"):
        plane = ControlPlane(build())
        plane.start()

        def connect(user: str) -> LiveCluster:
            return LiveCluster(load_connection(str(plane.kubeconfig), context=user).configuration)

        found.append(Backend("live", connect(TESTED_USER), connect(ADMIN_USER), plane))
    try:
        yield found
    finally:
        if plane is not None:
            plane.stop()


def api(args: argparse.Namespace) -> bool:
    from tests.support import faultruns

    ok = True
    print(f"API faults: {args.rate:.0%} of requests, seed {args.seed}, at most 3 runs each")
    with backends(args.backend) as found, tempfile.TemporaryDirectory() as tmp:
        for backend in found:
            started = time.monotonic()
            outcomes = [
                faultruns.composite_scenario(
                    backend,
                    FaultPlan(args.rate, seed=args.seed),
                    Path(tmp),
                    parents=args.parents,
                    children=3,
                    max_runs=3,
                ),
                faultruns.rollout_scenario(
                    backend, FaultPlan(args.rate, seed=args.seed + 1), Path(tmp), max_runs=3
                ),
            ]
            for n, example in enumerate(faultruns.EXAMPLE_CASES, start=2):
                outcomes.append(
                    faultruns.example_scenario(
                        backend,
                        FaultPlan(args.rate, seed=args.seed + n),
                        Path(tmp),
                        example,
                        max_runs=3,
                    )
                )
            for outcome in outcomes:
                print("  " + outcome.line())
            faulted = sum(sum(o.faulted.values()) for o in outcomes)
            requests = sum(o.requests for o in outcomes)
            worst = max((o.runs or 99) for o in outcomes)
            print(
                f"  {backend.name}: {len(outcomes)} scenarios, {faulted} of {requests} requests "
                f"faulted; all converged: {all(o.runs for o in outcomes)} (at most {worst} "
                f"run(s)); invariants broken: {sum(len(o.problems) for o in outcomes)}; "
                f"exceptions out of a run: {sum(len(o.crashed) for o in outcomes)}; "
                f"{time.monotonic() - started:.0f} s"
            )
            ok = ok and all(o.ok for o in outcomes)
    return ok


def kill(args: argparse.Namespace) -> bool:
    from tests.support.killruns import kill_scenario

    ok = True
    print(f"Kills: {args.points} per backend, at a random write (1 to 8), before or after it")
    with backends(args.backend) as found, tempfile.TemporaryDirectory() as tmp:
        for backend in found:
            started = time.monotonic()
            outcome = kill_scenario(backend, Path(tmp), points=args.points, seed=args.seed)
            for line in outcome.lines():
                print("  " + line)
            print(f"         {time.monotonic() - started:.0f} s")
            ok = ok and outcome.ok
    return ok


def hooks(args: argparse.Namespace) -> bool:
    test = ROOT / "tests" / "unit" / "test_hostile_hooks.py"
    env = {**os.environ, "RECONCILE_HOSTILE_CASES": str(args.cases)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    properties = sum(1 for line in test.read_text().splitlines() if line.startswith("@given"))
    print(
        f"Hostile hooks: {properties} properties x {args.cases} generated answers = "
        f"{properties * args.cases} cases (random JSON, wrong types, bad names and namespaces, "
        "undeclared kinds, duplicates, labels, status and resyncAfterSeconds of every wrong "
        "kind, random bytes)"
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    print(
        f"  {summary}; a refused answer plans nothing (zero deletes), an accepted one deletes "
        f"only what it leaves out, every refusal names its field; "
        f"{time.monotonic() - started:.0f} s"
    )
    if done.returncode != 0:
        print(done.stdout[-4000:])
    return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["api", "kill", "hooks", "all"])
    parser.add_argument("--backend", choices=["memory", "live", "both"], default="both")
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--parents", type=int, default=200)
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    results = []
    if args.what in ("api", "all"):
        results.append(api(args))
    if args.what in ("kill", "all"):
        results.append(kill(args))
    if args.what in ("hooks", "all"):
        results.append(hooks(args))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
