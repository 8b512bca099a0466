"""API faults on both backends (small versions of `scripts/faults.py api`): one request in
ten answered with 409, 429, 500, 503, a reset or a late answer (on the live backend through a
proxy in front of the real API server, some after the write was done). Every scenario must
converge within three runs with nothing lost, duplicated or touched that is not its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import faultruns, killruns
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.faults import Fault, FaultPlan
from tests.support.hookserver import serve


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


@pytest.mark.long
def test_kills_at_any_write_keep_every_promise(backend: Backend, tmp_path: Path) -> None:
    """A few kill points (scripts/faults.py kill runs a hundred): before and after writes of
    children, status, revisions and the finalizer, through rollouts and finalizations."""
    outcome = killruns.kill_scenario(backend, tmp_path, points=6, seed=4)
    assert outcome.ok, outcome.lines()
    assert outcome.kills == 6


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_a_child_too_big_for_its_last_applied_copy_is_an_error_not_a_refused_request(
    backend: Backend, namespace: str, tmp_path: Path, server_side: bool
) -> None:
    """Client-side, a 300 KiB child cannot carry a copy of itself in an annotation: an error
    naming it. Server-side apply keeps no copy: the same child is written."""
    parents = backend.apply_crd("Big")
    for name in ("big", "small"):
        backend.admin.create(
            parents,
            {
                "apiVersion": parents.api_version,
                "kind": "Big",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"selector": {"matchLabels": {"parent": name}}},
            },
        )

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        size = 300 * 1024 if name == "big" else 10
        return {
            "children": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"{name}-data", "labels": {"parent": name}},
                    "data": {"blob": "x" * size},
                }
            ]
        }

    with serve(sync) as server:
        path = write_controllers(
            tmp_path,
            composite(
                "big", parents, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
            ),
        )
        mark = backend.mark()
        result = run(backend, path, server_side_apply=server_side)
    configmaps = backend.admin.discover("v1", "configmaps")
    names = {
        m["metadata"]["name"] for m in backend.admin.list(configmaps, namespace=namespace).items
    }
    if server_side:
        assert result.errors == [] and {"small-data", "big-data"} <= names
        return
    errors = "\n".join(result.errors)
    assert f"Big {namespace}/big" in errors and "ConfigMap big-data" in errors, errors
    assert "256 KiB limit on annotations" in errors
    assert len(result.passes) <= 2  # an error, not a loop of refused requests
    assert "small-data" in names and "big-data" not in names
    assert backend.mutations_since(mark)["create"] >= 1
