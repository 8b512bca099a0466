"""The CLI against the real API server: it connects with kubectl's settings and says so."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reconcile.cli.run import app
from tests.support.controlplane import TESTED_USER, ControlPlane

pytestmark = pytest.mark.controlplane


def test_connects_with_kubeconfig_and_context(control_plane: ControlPlane) -> None:
    result = CliRunner().invoke(
        app,
        [
            "--kubeconfig",
            str(control_plane.kubeconfig),
            "--context",
            TESTED_USER,
            "--log-format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    line = json.loads(result.stderr.strip().splitlines()[-1])
    # No controllers were given here: the run asks the server for them and finishes.
    assert line["message"] == "run converged"
    assert line["requests"]["discover"] >= 1 and line["errors"] == 0


def test_unknown_context_is_an_error(control_plane: ControlPlane) -> None:
    result = CliRunner().invoke(
        app,
        ["--kubeconfig", str(control_plane.kubeconfig), "--context", "no-such-context"],
    )
    assert result.exit_code == 1
    assert "no-such-context" in result.output
