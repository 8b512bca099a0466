"""The benchmark's pure pieces (scripts/benchmark_floors.py, scripts/benchmark_chart.py,
scripts/benchmark_steps.py): what the floor derives from a report, the chart it draws, and how
a step's CPU is told from the steps it encloses."""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.support.cli import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from benchmark_chart import chart
from benchmark_floors import Shape, pass_shapes
from benchmark_steps import TOTALS, timed_step


def report(*passes: dict[str, int]) -> dict[str, Any]:
    return {"passes": [{"number": i + 1, "requests": r} for i, r in enumerate(passes)]}


def test_a_cold_runs_passes_read_as_creates_events_and_status_writes() -> None:
    cold = report(
        {"create": 5200, "discover": 5, "list": 7, "update": 1000},  # 200 Events: the cap
        {"list": 13, "update": 1000},
        {"list": 13},
    )
    assert pass_shapes(cold, parents=1000, children=5) == [
        Shape(creates_per_parent=5, events=200, status_updates=True),
        Shape(creates_per_parent=0, events=0, status_updates=True),
        Shape(creates_per_parent=0, events=0, status_updates=False),
    ]


def test_a_pass_not_the_same_for_every_parent_is_refused() -> None:
    with pytest.raises(SystemExit, match="pass 1 sent"):
        pass_shapes(report({"create": 5000, "update": 17}), parents=1000, children=5)


def test_the_chart_draws_a_line_and_a_legend_entry_per_series() -> None:
    svg = chart(
        "title",
        "machine & run",
        {
            "ours": {1000: 17.7, 10000: 158.0},
            "floor": {1000: 15.0, 10000: 140.0},
            "kubectl": {1000: 11.0},
        },
    )
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    lines = root.findall("s:polyline", ns)
    assert len(lines) == 3
    texts = [t.text for t in root.findall("s:text", ns)]
    assert {"ours", "floor", "kubectl", "machine & run"} <= set(texts)
    # log axes: the decades of the data are labelled
    assert {"1,000", "10,000", "10", "100"} <= set(texts)
    # a point's value is on it, for a reader hovering
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert "ours: 10,000 parents, 158.00 s" in titles


def test_a_chart_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing to draw"):
        chart("t", "s", {"empty": {}})


def _spin(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_step_counts_its_own_cpu_not_the_steps_it_encloses() -> None:
    inner = timed_step(lambda: _spin(0.03), "test: inner")

    def outer_body() -> None:
        _spin(0.01)
        inner()
        inner()

    outer = timed_step(outer_body, "test: outer")
    outer()
    calls, own = TOTALS.pop("test: outer")
    inner_calls, inner_cpu = TOTALS.pop("test: inner")
    assert (calls, inner_calls) == (1, 2)
    assert inner_cpu >= 0.06
    assert 0.01 <= own < 0.03  # the 10 ms of its own, not the inner 60
