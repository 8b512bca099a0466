"""`--help` as people read it: at 80 columns (a pipe, a CI log) every line fits and no option
name is cut, options sit in panels, durations read as durations; and `--help` / `--version`
load none of the run's modules (what makes them fast)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reconcile.cli.help import format_duration
from tests.support.cli import unreachable_kubeconfig

COMMANDS = {"run": [], "diff": ["diff"], "status": ["status"]}


def help_of(words: list[str], columns: int = 80) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "reconcile", *words, "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": str(columns), "TERM": "dumb"},
    )
    return done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_fits_80_columns_with_every_name_whole(command: str) -> None:
    text = help_of(COMMANDS[command])
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert "…" not in text and "\x1b" not in text  # nothing cut, no escape codes in a pipe
    options = text[text.index("\nConnection:\n" if command == "run" else "\nOptions:\n") :]
    names = re.findall(r"^  (--?[a-zA-Z][\w-]*)", options, re.M)
    assert len(names) == len(set(names)) > 3
    if command == "run":
        assert len(lines) < 260  # today's 471 with rich boxes


def test_the_run_options_sit_in_panels_with_durations_as_durations() -> None:
    text = help_of([])
    panels = re.findall(r"^(\S[^:\n]*):$", text, re.M)
    assert panels == [
        "Connection",
        "Sources (controllers and objects)",
        "Behaviour",
        "Output",
        "Other options",
    ]
    assert re.search(r"--max-duration DURATION .*\[default: 5m;", " ".join(text.split()))
    assert re.search(r"--poll-interval DURATION .*\[default: 2s;", " ".join(text.split()))
    assert "<float>" not in text and "300.0" not in text
    flat = " ".join(text.split())
    assert "env: RECONCILE_MAX_DURATION" in flat
    # every option of the command is in the help, with its variable
    from typer.main import get_command

    from reconcile.cli.run import app

    command = get_command(app)
    for param in command.params:
        if param.name in ("help", "show_version"):
            continue
        assert sorted(param.opts, key=len)[0] in text, param.name
        assert f"RECONCILE_{param.name.upper()}" in flat, param.name


def test_help_and_version_load_none_of_the_run() -> None:
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['reconcile', sys.argv[1]]\n"
        "try:\n"
        "    runpy.run_module('reconcile', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('reconcile.job.app', 'reconcile.runner.run', 'reconcile.report',\n"
        "    'reconcile.cluster.memory', 'rich.console', 'kubernetes') if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    for flag in ("--help", "--version"):
        done = subprocess.run(
            [sys.executable, "-c", probe, flag], capture_output=True, text=True, check=True
        )
        assert done.stderr.strip().splitlines()[-1] == "[]", (flag, done.stderr)


def test_a_run_against_a_cluster_loads_no_in_process_cluster(tmp_path: Path) -> None:
    """The in-process API server (a third of the package) is imported for --local only."""
    kubeconfig = unreachable_kubeconfig(tmp_path)
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['reconcile', '--kubeconfig', sys.argv[1], '--max-duration', '0.2']\n"
        "try:\n"
        "    runpy.run_module('reconcile', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "memory = [m for m in sys.modules if m.startswith('reconcile.cluster.memory')]\n"
        "print(memory, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(kubeconfig)], capture_output=True, text=True, check=False
    )
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr[-2000:]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(300, "5m"), (2, "2s"), (30, "30s"), (5400, "1h30m"), (0.5, "500ms"), (2.5, "2.5s"), (0, "0")],
)
def test_durations_read_as_people_write_them(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
