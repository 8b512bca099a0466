"""The API server's size limits, named per object before anything is sent."""

from __future__ import annotations

from reconcile.engine.limits import child_size_problem, status_size_problem


def configmap(size: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": {"blob": "x" * size}}


def test_an_ordinary_child_passes() -> None:
    assert child_size_problem(configmap(10_000)) is None


def test_a_child_whose_last_applied_copy_is_too_long() -> None:
    problem = child_size_problem(configmap(300_000))
    assert problem is not None and "256 KiB" in problem and "last-applied" in problem


def test_a_child_over_the_request_limit() -> None:
    problem = child_size_problem(configmap(4 * 1024 * 1024))
    assert problem is not None and "3 MiB" in problem


def test_status_over_the_request_limit() -> None:
    assert status_size_problem({"status": {"x": "y" * 1000}}) is None
    problem = status_size_problem({"status": {"x": "y" * (3 * 1024 * 1024)}})
    assert problem is not None and problem.startswith("status:")
