"""A small run of `scripts/benchmark.py` on the live backend (the script runs 1,000 and 10,000
parents, three times each; here 3 parents once): it runs as a user runs it, with every baseline
beside our runs, and writes its figures and its chart."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.cli import ROOT, command_env
from tests.support.controlplane import CURRENT_RELEASE, build


@pytest.fixture
def built() -> None:
    """On a fresh machine the test command is still building the control plane the script
    starts: waited for here, in a fixture, outside the test's and the script's time limits."""
    build(CURRENT_RELEASE)


@pytest.mark.controlplane
@pytest.mark.long
@pytest.mark.usefixtures("built")
def test_the_live_benchmark_prints_our_runs_beside_their_floors(tmp_path: Path) -> None:
    figures, picture = tmp_path / "figures.json", tmp_path / "chart.svg"
    done = subprocess.run(
        [
            sys.executable,
            "scripts/benchmark.py",
            "--parents",
            "3",
            "--backend",
            "live",
            "--repeat",
            "1",
            "--json",
            str(figures),
            "--chart",
            str(picture),
            "--machine",
            "the test machine",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
        env=command_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "cold pass 1 vs the raw client sending its requests" in out
    assert "steady run vs its floor, the same LISTs and hook calls" in out
    assert "kubectl apply -f: cold" in out
    assert "our converged run's CPU by step, per parent" in out
    assert "the raw client's CPU per parent for the same hook call and its JSON" in out
    assert "the machine's CPU time its host took for other machines (steal)" in out
    medians = json.loads(figures.read_text())["medians"]["3"]
    for key in (
        "cold_run",
        "steady_run",
        "floor_cold_run",
        "floor_steady",
        "kubectl_cold",
        "floor_steady_hook_cpu_us",
        "step: observe: claims, lookups",
        "step: hook call: HTTP, JSON both ways",
        "step: plan: children completed, compared",
    ):
        assert medians[key] > 0, key
    for key in ("cold_stolen", "steady_stolen", "floor_steady_stolen"):
        assert 0 <= medians[key] < 1, key  # a share of the machine's time (0 off Linux)
    # the floor sends what our run sent, so it cannot take longer than the run around it
    assert medians["floor_cold_pass1"] <= medians["cold_run"]
    root = ET.fromstring(picture.read_text())
    legend = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"reconcile, cold run", "floor: its LISTs and hooks", "kubectl apply, unchanged"} <= (
        legend
    )
    assert "the test machine; median of 3 runs" not in legend  # one run here, and said so
    assert "the test machine; median of 1 run(s)" in legend
