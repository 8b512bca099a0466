"""The command line: help, version, option parsing and the errors a user sees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reconcile.job.app
from reconcile import __version__
from reconcile.cli.run import app

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


@pytest.mark.parametrize(
    ("args", "env", "mode"),
    [
        ([], None, (False, False)),
        (["--dry-run"], None, (True, False)),  # kubectl's spelling: alone, it is client
        (["--dry-run", "--workers", "3"], None, (True, False)),
        (["--dry-run=client"], None, (True, False)),
        (["--dry-run=server"], None, (True, True)),
        (["--dry-run", "server"], None, (True, True)),
        (["--dry-run=none"], None, (False, False)),
        (["--dry-run=true"], None, (True, False)),  # kubectl's legacy spellings
        (["--dry-run=false"], None, (False, False)),
        ([], "server", (True, True)),
        ([], "true", (True, False)),  # what RECONCILE_DRY_RUN held while it was a flag
        ([], "false", (False, False)),
        (["--dry-run=none"], "server", (False, False)),  # the command line wins
        (["--context", "--dry-run"], None, (False, False)),  # a value, not the option
    ],
)
def test_dry_run_modes(
    args: list[str],
    env: str | None,
    mode: tuple[bool, bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reconcile.config import RunConfig

    seen: list[RunConfig] = []

    def job(config: RunConfig) -> tuple[None, int]:
        seen.append(config)
        return None, 0

    monkeypatch.setattr(reconcile.job.app, "main_job", job)  # imported by the command when it runs
    result = runner.invoke(app, args, env={"RECONCILE_DRY_RUN": env} if env else None)
    assert result.exit_code == 0, result.output
    settings = seen[0].reconcile
    assert (settings.dry_run, settings.server_dry_run) == mode


@pytest.mark.parametrize("value", ["--dry-run=serve", "--dry-run=", "--dry-run=All"])
def test_an_unknown_dry_run_mode_is_a_usage_error(value: str) -> None:
    result = runner.invoke(app, [value])
    assert result.exit_code == 1
    said = " ".join(result.output.replace("│", " ").split())  # unwrapped from its box
    assert "--dry-run" in said and "not a dry-run mode: client, server or none" in said
