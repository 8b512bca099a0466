"""A small run of `scripts/benchmark.py --scenario startup` (the script times 11 processes of
each kind; here 2): the real command against a loopback socket that notes its requests."""

from __future__ import annotations

import sys

import pytest

from tests.support.cli import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from benchmark_startup import first_request, report


def test_a_live_runs_first_request_is_its_servers_release_then_its_controllers() -> None:
    first = first_request(runs=2)
    assert first.line == "GET /version HTTP/1.1"
    # the parent's API group, asked while the release is still unanswered
    assert first.work_line == "GET /apis/bench.example.com/v1 HTTP/1.1"
    assert 0 < first.wall <= first.work_wall < 10
    assert 0 < first.cpu < 5


def test_the_startup_scenario_prints_each_figure_beside_its_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    figures = report(runs=2)
    out = capsys.readouterr().out
    assert "process start to the first API request (GET /version HTTP/1.1)" in out
    assert "target <= 0.3 s" in out and "target <= 0.15 s" in out
    assert "to the first request about its controllers (GET /apis/bench.example.com/v1" in out
    assert set(figures) == {
        "first_request",
        "first_request_cpu",
        "first_controller_request",
        "help",
    }
    assert all(value > 0 for value in figures.values())
