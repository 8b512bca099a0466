"""Running a composite GitHub Action's steps as the runner does: each `run:` with its `shell`
(bash: `bash --noprofile --norc -eo pipefail FILE`), its `env:`, `${{ inputs.* }}`,
`${{ github.action_path }}` and `${{ steps.<id>.outputs.* }}` substituted, and GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY and RUNNER_TEMP pointing at files of the test's own."""

from __future__ import annotations

import os
import re
import subprocess
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


def run_action(
    action_dir: Path,
    inputs: dict[str, str],
    runner_temp: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> ActionRun:
    spec: dict[str, Any] = yaml.safe_load((action_dir / "action.yml").read_text())
    declared = spec.get("inputs") or {}
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    values = {name: str(d.get("default", "")) for name, d in declared.items()} | inputs
    runner_temp.mkdir(parents=True, exist_ok=True)
    summary = runner_temp / "step-summary.md"
    summary.touch()
    step_outputs: dict[str, dict[str, str]] = {}
    stdout, stderr, code = "", "", 0

    def substitute(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("inputs."):
                return values[expression.removeprefix("inputs.")]
            if expression == "github.action_path":
                return str(action_dir)
            found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            if found:
                return step_outputs.get(found.group(1), {}).get(found.group(2), "")
            raise AssertionError(f"an expression this runner does not know: {expression}")

        return _EXPRESSION.sub(value, text)

    for index, step in enumerate(spec["runs"]["steps"]):
        assert step.get("shell") == "bash", "every run step names its shell"
        step_id = step.get("id", f"step{index}")
        output_file = runner_temp / f"output-{step_id}"
        output_file.write_text("")
        script = runner_temp / f"{step_id}.sh"
        script.write_text(substitute(step["run"]))
        step_env = {
            **os.environ,
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
    annotations = [line for line in stdout.splitlines() if line.startswith("::error")]
    return ActionRun(code, outputs, summary.read_text(), stdout, stderr, annotations)


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
