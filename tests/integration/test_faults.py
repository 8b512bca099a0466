"""API faults on both backends (small versions of `scripts/faults.py api`): one request in
ten answered with 409, 429, 500, 503, a reset or a late answer (on the live backend through a
proxy in front of the real API server, some after the write was done). Every scenario must
converge within three runs with nothing lost, duplicated or touched that is not its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import faultruns
from tests.support.backends import Backend
from tests.support.faults import Fault, FaultPlan


def test_a_composite_controller_converges_under_faults(backend: Backend, tmp_path: Path) -> None:
    plan = FaultPlan(0.1, seed=7)
    outcome = faultruns.composite_scenario(
        backend, plan, tmp_path, parents=20, children=3, max_runs=3
    )
    assert outcome.ok, outcome.line()
    assert sum(outcome.faulted.values()) > 0


def test_a_rollout_converges_under_faults_one_pod_at_a_time(
    backend: Backend, tmp_path: Path
) -> None:
    outcome = faultruns.rollout_scenario(backend, FaultPlan(0.1, seed=11), tmp_path, max_runs=3)
    assert outcome.ok, outcome.line()


@pytest.mark.parametrize("example", ["hello-world", "configmap-transform"])
def test_examples_converge_under_faults(backend: Backend, tmp_path: Path, example: str) -> None:
    outcome = faultruns.example_scenario(
        backend, FaultPlan(0.2, seed=3), tmp_path, example, max_runs=3
    )
    assert outcome.ok, outcome.line()


def test_every_write_failing_after_it_was_done_still_converges(
    backend: Backend, tmp_path: Path
) -> None:
    """The nastiest case on every write: the server did it, the client was told it failed."""
    plan = FaultPlan(0.5, seed=5, kinds=(Fault.ERROR_AFTER, Fault.RESET_AFTER))
    outcome = faultruns.composite_scenario(
        backend, plan, tmp_path, parents=5, children=2, max_runs=3
    )
    assert outcome.ok, outcome.line()
