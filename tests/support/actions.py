"""Running a composite GitHub Action's steps as the runner does: each `run:` with its `shell`
(bash: `bash --noprofile --norc -eo pipefail FILE`), its `env:`, `${{ inputs.* }}`,
`${{ github.* }}` (action_path, and the values the test gives: token, workflow, job) and
`${{ steps.<id>.outputs.* }}` substituted (in the inputs' defaults too), and GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE and RUNNER_TEMP pointing at files of the test's own.

A `uses:` step (another action: setup-python, cache) is not run: it is listed in
`ActionRun.skipped`, for the test to check how it is configured, and its outputs are empty, as
the steps after it must allow. A `run:` step with an `if:` is refused: this runner does not
evaluate conditions, and a step it would run regardless would test nothing. The environment of
the test's own process is passed on without its GITHUB_*, RUNNER_* and ACTIONS_* variables: a
suite run by GitHub Actions must not act on its own pull request."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass
class ActionRun:
    returncode: int  # of the step that stopped the action (0 when all passed)
    outputs: dict[str, str]  # the action's outputs
    summary: str  # what the steps wrote to GITHUB_STEP_SUMMARY
    stdout: str  # every step's standard output (annotations are there)
    stderr: str
    annotations: list[str] = field(default_factory=list)  # `::error ...` lines
    warnings: list[str] = field(default_factory=list)  # `::warning ...` lines
    skipped: list[dict[str, Any]] = field(default_factory=list)  # the `uses:` steps, as written


def run_action(
    action_dir: Path,
    inputs: dict[str, str],
    runner_temp: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    github: Mapping[str, str] | None = None,
    skip: Collection[str] = (),
) -> ActionRun:
    """`github`: the `github` context's values (token, workflow, job); `skip`: ids of `run:`
    steps not to run (an install the test has done itself)."""
    spec: dict[str, Any] = yaml.safe_load((action_dir / "action.yml").read_text())
    declared = spec.get("inputs") or {}
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    context = {"workflow": "tests", "job": "action", "token": ""} | dict(github or {})
    context["action_path"] = str(action_dir)
    values: dict[str, str] = {}
    runner_temp.mkdir(parents=True, exist_ok=True)
    summary = runner_temp / "step-summary.md"
    summary.touch()
    step_outputs: dict[str, dict[str, str]] = {}
    stdout, stderr, code = "", "", 0
    skipped: list[dict[str, Any]] = []

    def substitute(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("inputs."):
                return values[expression.removeprefix("inputs.")]
            if expression.startswith("github.") and expression[7:] in context:
                return context[expression[7:]]
            found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            if found:
                return step_outputs.get(found.group(1), {}).get(found.group(2), "")
            raise AssertionError(f"an expression this runner does not know: {expression}")

        return _EXPRESSION.sub(value, text)

    values.update({name: substitute(str(d.get("default", ""))) for name, d in declared.items()})
    values.update(inputs)
    workspace = str(cwd or Path.cwd())
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "ACTIONS_"))
    }
    steps = spec["runs"]["steps"]
    unknown_skips = set(skip) - {step.get("id") for step in steps if "run" in step}
    assert not unknown_skips, f"no run steps with the ids {unknown_skips}"
    for index, step in enumerate(steps):
        if "uses" in step:
            skipped.append(step)
            continue
        assert "if" not in step, f"a run step with a condition this runner ignores: {step}"
        assert step.get("shell") == "bash", "every run step names its shell"
        step_id = step.get("id", f"step{index}")
        if step_id in skip:
            continue
        output_file = runner_temp / f"output-{step_id}"
        output_file.write_text("")
        script = runner_temp / f"{step_id}.sh"
        script.write_text(substitute(step["run"]))
        step_env = {
            **inherited,
            "GITHUB_WORKSPACE": workspace,
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            **(env or {}),
            **{k: substitute(str(v)) for k, v in (step.get("env") or {}).items()},
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ACTION_PATH": str(action_dir),
            "RUNNER_TEMP": str(runner_temp),
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            capture_output=True,
            text=True,
            env=step_env,
            cwd=cwd,
            timeout=600,
            check=False,
        )
        stdout += done.stdout
        stderr += done.stderr
        step_outputs[step_id] = _read_outputs(output_file.read_text())
        if done.returncode != 0:
            code = done.returncode
            break
    outputs = {
        name: substitute(str(d.get("value", ""))) for name, d in (spec.get("outputs") or {}).items()
    }
    lines = stdout.splitlines()
    annotations = [line for line in lines if line.startswith("::error")]
    warnings = [line for line in lines if line.startswith("::warning")]
    return ActionRun(
        code, outputs, summary.read_text(), stdout, stderr, annotations, warnings, skipped
    )


def _read_outputs(text: str) -> dict[str, str]:
    """`name=value` lines, and `name<<DELIMITER` blocks, as GITHUB_OUTPUT holds them."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delimiter = line.split("<<", 1)
            block = []
            for body in lines:
                if body == delimiter:
                    break
                block.append(body)
            outputs[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs
