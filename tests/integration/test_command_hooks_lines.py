"""Long-lived command hooks (`protocol: lines`) through the real `reconcile --local` command:
the hello-world hook served by a few processes for all parents; one parent whose call crashes
its process fails alone while the others converge; a hang stopped by SIGTERM or by the end of
the budget leaves no process behind. (The examples run in lines mode on both backends in
test_examples.py.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tests.support.cli import command_env, reconcile
from tests.support.examples import EXAMPLES
from tests.support.poll import eventually

PARENTS = [f"p{n}" for n in range(8)]

# Records each process's pid, then answers as hello-world does, except for two parents.
HOOK = """
import os, sys, time
from pathlib import Path

import hooks
from hooklib import run

MARKERS = Path(os.environ["MARKERS"])


def sync(request):
    (MARKERS / str(os.getpid())).touch()
    name = request["parent"]["metadata"]["name"]
    if name == "crash-me":
        sys.exit("cannot greet crash-me")
    if name == "hang-me":
        (MARKERS / "hanging").touch()
        time.sleep(120)
    return hooks.sync(request)


run({"sync": sync})
"""


def setup(tmp_path: Path, *extra_parents: str, timeout: str = "10s") -> tuple[Path, Path]:
    """The inputs directory (hello-world with a lines hook) and the markers directory."""
    inputs, markers = tmp_path / "inputs", tmp_path / "markers"
    inputs.mkdir()
    markers.mkdir()
    for name in ("crd.yaml", "hooks.py", "hooklib.py"):
        shutil.copy(EXAMPLES / "hello-world" / name, inputs / name)
    (inputs / "lines_hook.py").write_text(HOOK)
    controller: dict[str, Any] = yaml.safe_load(
        (EXAMPLES / "hello-world" / "controller.yaml").read_text()
    )
    controller["spec"]["hooks"]["sync"] = {
        "command": {
            "argv": [sys.executable, "lines_hook.py", "--lines", "sync"],
            "protocol": "lines",
            "timeout": timeout,
            "env": {"MARKERS": str(markers)},
        }
    }
    (inputs / "controller.yaml").write_text(yaml.safe_dump(controller))
    parents: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hello"}}
    ]
    parents += [
        {
            "apiVersion": "example.com/v1",
            "kind": "HelloWorld",
            "metadata": {"name": name, "namespace": "hello"},
            "spec": {"who": name},
        }
        for name in [*PARENTS, *extra_parents]
    ]
    (inputs / "hello.yaml").write_text(yaml.safe_dump_all(parents))
    return inputs, markers


def pids(markers: Path) -> list[int]:
    return [int(path.name) for path in markers.iterdir() if path.name.isdigit()]


def all_gone(markers: Path) -> bool:
    def running(pid: int) -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] != "Z"

    return not any(running(pid) for pid in pids(markers))


def test_a_crash_on_one_parent_fails_it_alone(tmp_path: Path) -> None:
    inputs, markers = setup(tmp_path, "crash-me")
    out, report = tmp_path / "out", tmp_path / "report.json"
    done = reconcile(
        "--local",
        str(inputs),
        "--output-dir",
        str(out),
        "--workers",
        "2",
        "--report-file",
        f"json:{report}",
        cwd=tmp_path,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    text = report.read_text()
    assert "crash-me" in text
    assert "exited with status 1 without answering: cannot greet crash-me" in text
    pods = {
        document["metadata"]["name"]
        for path in out.rglob("*.yaml")
        for document in yaml.safe_load_all(path.read_text())
        if document and document.get("kind") == "Pod"
    }
    assert pods == set(PARENTS)
    # a handful of processes served every call (each crash starts one more)
    assert len(pids(markers)) <= 2 + text.count("cannot greet crash-me") + 2
    assert eventually(lambda: all_gone(markers), what="the hook processes to end", timeout=5)
    json.loads(text)


def test_sigterm_leaves_no_hook_process(tmp_path: Path) -> None:
    inputs, markers = setup(tmp_path, "hang-me", timeout="100s")
    process = subprocess.Popen(
        [sys.executable, "-m", "reconcile", "--local", str(inputs), "--max-duration", "300s"],
        cwd=tmp_path,
        env=command_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        eventually((markers / "hanging").exists, what="the hook to hang", timeout=60)
        assert pids(markers)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    assert process.returncode == 143, stderr[-2000:]
    assert eventually(lambda: all_gone(markers), what="the hook processes to end", timeout=5)


def test_the_end_of_the_budget_leaves_no_hook_process(tmp_path: Path) -> None:
    inputs, markers = setup(tmp_path, "hang-me", timeout="100s")
    started = time.monotonic()
    done = reconcile("--local", str(inputs), "--max-duration", "3s", cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 20
    assert done.returncode != 0
    assert (markers / "hanging").exists()
    assert eventually(lambda: all_gone(markers), what="the hook processes to end", timeout=5)
