"""A small run of `scripts/benchmark.py --scenario command`, the figures of command hooks in
their two modes (the script runs 200 and 1,000 parents; here 3): it runs as a user runs it and
prints both columns from reports that say the run converged."""

from __future__ import annotations

import subprocess
import sys

from tests.support.cli import ROOT, command_env


def test_the_command_scenario_prints_exec_and_lines_side_by_side() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/benchmark.py", "--scenario", "command", "--parents", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=command_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "3 parents, a three-line Python command hook, --workers 8" in lines
    assert any(line.split() == ["exec", "lines"] for line in lines)  # the columns' header
    rows = {line[:28].strip(): line[28:].split() for line in lines if line[:28].strip()}
    assert len(rows["cold run (wall, s)"]) == 2
    assert len(rows["converged pass (s)"]) == 2
    # a status written, then a pass with nothing to do: both modes converge the same way
    assert rows["passes"] == ["2", "2"]
    assert any(line.startswith("lines is ") for line in lines)
