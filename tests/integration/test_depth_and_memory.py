"""Memory and depth bounded on every input path, through the real command on both backends: a
hook answer that would decode to millions of values is refused before it is built (the run's
peak memory stays small, measured), a hook status nested 600 deep is its parent's error while
the other parents are synced and reported, and manifests, controller files and `--local`
inputs nested too deep are one-line errors naming the file, never a traceback or a crash."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import command_env, measured_command
from tests.support.hookserver import serve
from tests.support.vault import Vault


def flood(item: bytes, size: int = 15 * 1024 * 1024) -> bytes:
    """An answer of `size` bytes: `{"children":[item,item,...]}`."""
    count = (size - 20) // (len(item) + 1)
    return b'{"children":[' + b",".join([item] * count) + b"]}"


def deep_status(depth: int) -> dict[str, Any]:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return {"status": value, "children": []}


def use_webhook(vault: Vault, url: str) -> None:
    controller = vault.controller()
    controller["spec"]["hooks"] = {"sync": {"webhook": {"url": url, "timeout": "60s"}}}
    vault.controller_path.write_text(yaml.safe_dump(controller))


def run_measured(vault: Vault, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The command, and its peak resident memory in MiB."""
    figure = vault.directory / "maxrss"
    done = subprocess.run(
        measured_command(figure, *vault.args(*extra)),
        capture_output=True,
        text=True,
        cwd=vault.directory,
        timeout=300,
        env=command_env(),
        check=False,
    )
    return done, int(figure.read_text()) / 1024


def report_of(vault: Vault) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((vault.directory / "report.json").read_text())
    return report


FLOODS = {"empty-objects": b"{}", "empty-arrays": b"[]", "zeros": b"0", "short-strings": b'"ab"'}


@pytest.mark.parametrize("item", FLOODS.values(), ids=FLOODS.keys())
def test_a_hook_answer_of_millions_of_values_is_refused_before_it_is_built(
    vault: Vault, item: bytes
) -> None:
    # short strings: 6 MiB is already 1.26 million values (strings are counted in the slow way,
    # without the marks inside them)
    size = (6 if item.startswith(b'"') else 15) * 1024 * 1024
    answers = {f"flood-{i}": flood(item, size) for i in range(4)}

    def handler(request: dict[str, Any]) -> Any:
        name = request["parent"]["metadata"]["name"]
        if name in answers:
            return 200, answers[name]
        return {"status": {"ok": True}, "children": []}

    for name in answers:
        vault.parent(name)
    vault.parent("fine")
    vault.write()
    with serve(handler) as server:
        use_webhook(vault, server.url)
        started = time.monotonic()
        done, peak = run_measured(
            vault, "--workers", "4", "--report-file", f"json:{vault.directory / 'report.json'}"
        )
        elapsed = time.monotonic() - started
    mib = size // (1024 * 1024)
    print(f"{item!r}: 4 parents x {mib} MiB answers: peak RSS {peak:.0f} MiB, {elapsed:.1f} s")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    errors = report_of(vault)["errors"]
    for name in answers:
        assert any(name in e and "more than 500000 values" in e for e in errors), errors
    assert not any("fine" in e for e in errors)
    # four 15 MiB bodies are read in parallel (60 MiB) on top of the process itself; decoded,
    # they would take ~1.8 GiB
    assert peak < 400, f"peak RSS {peak:.0f} MiB\n{done.stderr[-3000:]}"


def test_a_hook_status_nested_600_deep_is_its_parents_error(vault: Vault) -> None:
    def handler(request: dict[str, Any]) -> Any:
        name = request["parent"]["metadata"]["name"]
        if name == "deep":
            return deep_status(600)
        return {"status": {"ok": True}, "children": []}

    vault.parent("deep")
    vault.parent("fine")
    vault.write()
    with serve(handler) as server:
        use_webhook(vault, server.url)
        done = vault.run("--report-file", f"json:{vault.directory / 'report.json'}")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "internal error" not in done.stdout + done.stderr
    report = report_of(vault)
    (error,) = [e for e in report["errors"] if "deep" in e]
    assert "response body is nested deeper than 100 levels (at status.a.a" in error
    synced = {p["name"] for c in report["passes"][0]["controllers"] for p in c["parents"]}
    assert {"deep", "fine"} <= synced


def deep_block(depth: int) -> str:
    lines = [f"{'  ' * i}a:" for i in range(depth)]
    return "\n".join(lines) + f"\n{'  ' * depth}b: 1\n"


DEEP_FILES: dict[str, tuple[str, Callable[[], str]]] = {
    "block-1000": ("data.yaml", lambda: "data:\n" + _indent(deep_block(1000))),
    "block-150": ("data.yaml", lambda: "data:\n" + _indent(deep_block(150))),
    "flow-900": ("data.yaml", lambda: "data: " + "[" * 900 + "]" * 900 + "\n"),
    "flow-100000": ("data.yaml", lambda: "data: " + "[" * 100_000 + "]" * 100_000 + "\n"),
    "flow-mapping-100000": ("data.yaml", lambda: "data: " + "{a: " * 100_000 + "1" + "}" * 100_000),
    "json-100000": (
        "data.json",
        lambda: (
            '{"apiVersion": "v1", "kind": "ConfigMap", '
            '"metadata": {"name": "deep"}, "data": ' + "[" * 100_000 + "]" * 100_000 + "}"
        ),
    ),
    "json-300": (
        "data.json",
        lambda: (
            '{"apiVersion": "v1", "kind": "ConfigMap", '
            '"metadata": {"name": "deep"}, "data": ' + "[" * 300 + "]" * 300 + "}"
        ),
    ),
}


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def deep_file(directory: Path, variant: str) -> Path:
    name, make = DEEP_FILES[variant]
    directory.mkdir(parents=True, exist_ok=True)
    text = make()
    if name.endswith(".yaml"):
        text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n" + text
    (directory / name).write_text(text)
    return directory / name


@pytest.mark.parametrize("variant", DEEP_FILES)
@pytest.mark.parametrize("option", ["--manifests", "--controllers", "--local"])
def test_input_nested_too_deep_is_an_error_naming_the_file(
    tmp_path: Path, variant: str, option: str
) -> None:
    inputs = tmp_path / "inputs"
    path = deep_file(inputs, variant)
    state = tmp_path / "state"
    state.mkdir()
    (state / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    args = {
        "--manifests": ["--local", str(state), "--manifests", str(inputs)],
        "--controllers": ["--local", str(state), "--controllers", str(inputs)],
        "--local": ["--local", str(inputs)],
    }[option]
    done = subprocess.run(
        [sys.executable, "-m", "reconcile", *args, "--report-format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=command_env(),
        check=False,
    )
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])  # not a crash (-11)
    assert "Traceback" not in done.stderr
    assert "internal error" not in done.stdout + done.stderr
    assert path.name in done.stderr
    assert "nest" in done.stderr  # "nested deeper than 100 levels" or libyaml's nesting limit
