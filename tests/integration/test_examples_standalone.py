"""Every example directory works on its own, copied outside the repository: the real
`reconcile --local` reads its manifests and controllers from the copy and runs its command hooks
there, and its webhook variant calls the copy's `hooks.py --serve`. The examples are found by
listing examples/, so a new one is run here too, once HOW_TO_RUN says how."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ROOT, reconcile
from tests.support.examples import EXAMPLES


@dataclass(frozen=True)
class HowToRun:
    # each file the run must leave in --output-dir, with a text it must hold
    expect: dict[str, str]
    # --local and --controllers, relative to the example's directory; the webhook variant adds
    # --controllers webhook/controller.yaml, whose controllers replace their namesakes
    local: tuple[str, ...] = (".",)
    controllers: tuple[str, ...] = ()
    # for the command and the hook server
    env: dict[str, str] = field(default_factory=dict)


HOW_TO_RUN = {
    "bucket-quota": HowToRun(
        expect={"storage/buckets.example.com/logs.yaml": "quotaBytes: 161061273600"}
    ),
    "configmap-propagation": HowToRun(
        expect={
            f"{team}/configmaps/shared-settings.yaml": "region: eu-west-1"
            for team in ("team-a", "team-b")
        }
    ),
    "configmap-transform": HowToRun(
        expect={
            "shop/configmaps/frontend-env.yaml": "APP_LOG_LEVEL: info",
            "shop/configmaps/payments-env.yaml": "APP_RETRIES: '3'",
        }
    ),
    "gitops": HowToRun(
        local=("apps",),
        controllers=("controllers",),
        expect={
            "greetings/configmaps/hello-greeting.yaml": "message: Hello from git",
            "greetings/configmaps/welcome-greeting.yaml": "message: Welcome aboard",
        },
    ),
    "hello-world": HowToRun(expect={"hello/pods/your-name.yaml": "Hello, Your Name!"}),
    "indexed-job": HowToRun(
        expect={f"batch-demo/pods/print-index-{i}.yaml": f"value: '{i}'" for i in range(3)}
    ),
    "service-per-pod": HowToRun(
        expect={
            f"service-per-pod/services/nginx-{i}.yaml": f"pod-name: nginx-{i}" for i in range(3)
        }
    ),
    "snapshot-schedule": HowToRun(
        env={"SNAPSHOT_SCHEDULE_NOW": "2026-01-01T07:00:00Z"},
        expect={
            f"my-app/volumesnapshots.snapshot.storage.k8s.io/data-my-app-{i}-20260101-0600.yaml": (
                f"persistentVolumeClaimName: data-my-app-{i}"
            )
            for i in range(2)
        },
    ),
    "statefulset-like": HowToRun(
        expect={
            **{f"cats/pods/web-{i}.yaml": "image: nginx" for i in range(3)},
            **{f"cats/persistentvolumeclaims/data-web-{i}.yaml": "storage: 1Gi" for i in range(3)},
        }
    ),
}

EXAMPLE_NAMES = sorted(
    p.name for p in EXAMPLES.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
)
# where the webhook variants' controllers expect `hooks.py --serve 8080`
SERVED_AT = "http://127.0.0.1:8080"


def how_to_run(name: str) -> HowToRun:
    if name not in HOW_TO_RUN:
        pytest.fail(f"examples/{name}: not known here; add how to run it to HOW_TO_RUN")
    return HOW_TO_RUN[name]


def copied(name: str, tmp_path: Path) -> Path:
    copy = tmp_path / "elsewhere" / name
    shutil.copytree(EXAMPLES / name, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert not copy.resolve().is_relative_to(ROOT)  # nothing beside it to lean on
    return copy


def run_copy(
    copy: Path, how: HowToRun, tmp_path: Path, controllers: list[Path]
) -> tuple[dict[str, Any], Path]:
    """`reconcile --local` on the copy from an unrelated working directory: its report, and the
    directory of the objects it left."""
    out = tmp_path / "out"
    args = [arg for path in how.local for arg in ("--local", str(copy / path))]
    args += [arg for path in controllers for arg in ("--controllers", str(path))]
    done = reconcile(
        *args, "--output-dir", str(out), "--report-format", "json", cwd=tmp_path, env=how.env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), out


def hook_targets(report: dict[str, Any]) -> list[str]:
    return [
        hook["target"]
        for run_pass in report["passes"]
        for controller in run_pass["controllers"]
        for parent in controller["parents"]
        for hook in parent["hooks"]
    ]


def assert_converged_with_children(report: dict[str, Any], out: Path, how: HowToRun) -> None:
    assert report["loadErrors"] == [] and report["errors"] == [], report["errors"]
    assert report["warnings"] == []
    assert report["converged"] is True
    summary = report["summary"]
    assert summary["failed"] == 0 and summary["hooks"]["failed"] == 0, summary
    assert summary["applied"] > 0 and summary["hooks"]["ok"] > 0, summary
    for path, text in how.expect.items():
        assert (out / path).is_file(), f"{path} not in the output; found {sorted(out.rglob('*'))}"
        assert text in (out / path).read_text(), f"{path} without {text!r}"


@contextlib.contextmanager
def hook_server(copy: Path, how: HowToRun, tmp_path: Path) -> Iterator[str]:
    """The copy's hooks.py serving its webhooks on a free port, with no PYTHONPATH of ours;
    yields its base URL."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | how.env
    log = tmp_path / "hooks.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(copy / "hooks.py"), "--serve", "0"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=tmp_path,
            env=env,
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving on "), f"{line!r}; {log.read_text()[-3000:]}"
        yield line.removeprefix("serving on ").strip().rstrip("/")
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_every_known_example_is_there() -> None:
    assert set(HOW_TO_RUN) <= set(EXAMPLE_NAMES), "HOW_TO_RUN names a directory that is gone"


def command_hooks(name: str, how: HowToRun, tmp_path: Path) -> None:
    copy = copied(name, tmp_path)
    report, out = run_copy(copy, how, tmp_path, [copy / path for path in how.controllers])
    assert_converged_with_children(report, out, how)
    targets = hook_targets(report)
    assert targets and not any(t.startswith("http") for t in targets), targets


def webhooks(name: str, how: HowToRun, tmp_path: Path) -> None:
    copy = copied(name, tmp_path)
    controller = copy / "webhook" / "controller.yaml"
    with hook_server(copy, how, tmp_path) as url:
        text = controller.read_text()
        assert SERVED_AT in text, f"{controller.name} does not call {SERVED_AT}"
        controller.write_text(text.replace(SERVED_AT, url))
        report, out = run_copy(copy, how, tmp_path, [controller])
    assert_converged_with_children(report, out, how)
    targets = hook_targets(report)
    assert targets and all(t.startswith(f"{url}/") for t in targets), targets


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_copied_elsewhere_runs_there(name: str, tmp_path: Path) -> None:
    """With its command hooks, and with its webhooks when it has a webhook variant: both at
    once, each from a copy of its own (the suite's time is mostly the command's start-up)."""
    how = how_to_run(name)
    variants = {"command hooks": command_hooks}
    if (EXAMPLES / name / "webhook" / "controller.yaml").is_file():
        variants["webhooks"] = webhooks
    with ThreadPoolExecutor(len(variants)) as pool:
        done = {
            variant: pool.submit(check, name, how, tmp_path / variant.replace(" ", "-"))
            for variant, check in variants.items()
        }
    failed = {variant: future.exception() for variant, future in done.items()}
    failures = [f"{variant}: {error}" for variant, error in failed.items() if error]
    assert not failures, "\n\n".join(failures)
