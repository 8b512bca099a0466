"""The reference pages and the review comment of the documentation are generated from the code
(`scripts/reference.py`): the committed ones are what it writes today, and a stale one fails,
naming itself and the command that regenerates it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT, command_env

REFERENCE = ROOT / "scripts" / "reference.py"


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REFERENCE), "--check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=command_env(),
    )


@pytest.mark.long
def test_the_committed_pages_are_what_the_code_makes() -> None:
    done = check()
    assert done.returncode == 0, done.stderr


@pytest.mark.long
def test_a_stale_page_fails_naming_it_and_the_command(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    metrics = docs / "reference" / "metrics.md"
    metrics.write_text(metrics.read_text().replace("reconcile_run_passes", "reconcile_run_rounds"))
    gitops = docs / "gitops.md"
    gitops.write_text(gitops.read_text().replace("Glad you are here", "Welcome"))
    done = check("--docs", str(docs))
    assert done.returncode == 1
    assert "docs/reference/metrics.md, docs/gitops.md" in done.stderr, done.stderr
    assert "regenerate it with `.venv/bin/python scripts/reference.py`" in done.stderr
    assert "docs/reference/cli.md" not in done.stderr  # the pages left as they are
