"""The command line: help, version, option parsing and the errors a user sees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reconcile import __version__
from reconcile.cli import app

runner = CliRunner()


def test_help_lists_the_connection_and_logging_options() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for option in ("--kubeconfig", "--context", "--qps", "--burst", "--log-level", "--log-format"):
        assert option in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"reconcile {__version__}"


def test_no_cluster_configuration_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = runner.invoke(app, ["--log-format", "json"])
    assert result.exit_code == 1
    assert '"level": "error"' in result.output
    assert "no cluster configuration" in result.output


def test_bad_option_value_names_the_option() -> None:
    result = runner.invoke(app, ["--log-format", "xml"])
    assert result.exit_code == 1  # usage errors exit 1: 2 means "changes pending"
    assert "--log-format" in result.output


def test_module_entry_point_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "reconcile", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"reconcile {__version__}"
