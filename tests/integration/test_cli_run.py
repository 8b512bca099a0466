"""The `reconcile` command end to end: controllers read from the cluster, --dry-run, the exit
codes, and the embedded default (--local) with its YAML output."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from reconcile.cli.run import app
from reconcile.cluster import AlreadyExists, NotFound
from reconcile.cluster.types import Obj
from reconcile.crds import CRD_FILES
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import EXAMPLES, load_example
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]


def hello_controller(name: str, argv: list[str], **spec: Any) -> Obj:
    controller: Obj = yaml.safe_load((EXAMPLES / "hello-world" / "controller.yaml").read_text())
    controller["metadata"]["name"] = name
    controller["spec"]["hooks"]["sync"]["command"]["argv"] = argv
    controller["spec"].update(spec)
    return controller


@pytest.mark.controlplane
def test_cluster_controllers_dry_run_then_run(
    live_backend: Backend, control_plane: ControlPlane
) -> None:
    backend = live_backend
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for path in CRD_FILES:
        with contextlib.suppress(AlreadyExists):  # an earlier test installed them
            backend.admin.create(crds, yaml.safe_load(path.read_text()))
    controllers = eventually(
        lambda: backend.admin.discover("metacontroller.k8s.io/v1alpha1", "compositecontrollers"),
        what="the CompositeController CRD",
    )
    example = load_example(backend, "hello-world", "crd.yaml", "hello.yaml")
    hooks = str(EXAMPLES / "hello-world" / "hooks.py")
    backend.admin.create(
        controllers, hello_controller("cli-hello", [sys.executable, hooks, "sync"])
    )
    broken = hello_controller("cli-broken", [sys.executable, hooks, "sync"])
    broken["spec"]["hooks"]["sync"]["command"]["timeout"] = "10x"  # the CRD allows any string
    backend.admin.create(controllers, broken)
    base = [
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--context",
        TESTED_USER,
        "--controller",
        "cli-hello",
        "--log-format",
        "json",
        "--max-duration",
        "30",
    ]
    pods = backend.admin.discover("v1", "pods")
    ns = example.name("hello")
    try:
        mark = backend.mark()
        dry = CliRunner().invoke(app, [*base, "--dry-run"])
        assert dry.exit_code == 2, dry.output
        assert backend.mutations_since(mark) == {}
        with pytest.raises(NotFound):
            backend.admin.get(pods, "your-name", namespace=ns)

        real = CliRunner().invoke(app, base)
        assert real.exit_code == 0, real.output
        assert backend.admin.get(pods, "your-name", namespace=ns)["spec"]["containers"]

        again = CliRunner().invoke(app, [*base, "--dry-run"])
        assert again.exit_code == 0, again.output

        # An invalid controller is skipped with an error naming it and the field.
        with_broken = CliRunner().invoke(app, [*base, "--controller", "cli-broken"])
        assert with_broken.exit_code == 1
        assert "CompositeController cli-broken" in with_broken.output
        assert "spec.hooks.sync.command.timeout" in with_broken.output
    finally:
        for name in ("cli-hello", "cli-broken"):
            backend.admin.delete(controllers, name)
        example.cleanup()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return reconcile(*args, cwd=cwd)


def test_local_runs_an_example_and_writes_the_result(tmp_path: Path) -> None:
    """The embedded default through the real command, from another working directory."""
    out = tmp_path / "out"
    dry = cli("--local", str(EXAMPLES / "hello-world"), "--dry-run", cwd=tmp_path)
    assert dry.returncode == 2, dry.stderr
    done = cli(
        "--local",
        str(EXAMPLES / "hello-world"),
        "--output-dir",
        str(out),
        "--log-format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stderr.strip().splitlines()[-2])
    assert summary["message"] == "run converged"
    pod = yaml.safe_load((out / "hello" / "pods" / "your-name.yaml").read_text())
    assert pod["spec"]["containers"][0]["command"] == ["echo", "Hello, Your Name!"]
    parent = yaml.safe_load(
        (out / "hello" / "helloworlds.example.com" / "your-name.yaml").read_text()
    )
    assert parent["status"] == {"pods": 1, "observedGeneration": 1}
    # The written objects are a converged state: loading them again changes nothing. (The
    # controller in the output has no hooks.py beside it: --controllers supplies the one that
    # does, as it would in a repository.)
    again = cli(
        "--local",
        str(out),
        "-R",
        "--controllers",
        str(EXAMPLES / "hello-world" / "controller.yaml"),
        "--log-format",
        "json",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    final = json.loads(again.stderr.strip().splitlines()[-1])
    assert final["message"] == "run converged" and final["applied"] == {}
    assert set(final["requests"]) == {"list"}


def test_local_with_server_side_apply_writes_no_annotation_and_converges(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli(
        "--local",
        str(EXAMPLES / "hello-world"),
        "--apply-strategy",
        "server-side",
        "--output-dir",
        str(out),
        "--report-format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["applyStrategy"] == "server-side" and report["converged"]
    pod = yaml.safe_load((out / "hello" / "pods" / "your-name.yaml").read_text())
    assert "metacontroller.k8s.io/last-applied-configuration" not in (
        pod["metadata"].get("annotations") or {}
    )
    again = cli(
        "--local",
        str(out),
        "-R",
        "--controllers",
        str(EXAMPLES / "hello-world" / "controller.yaml"),
        "--apply-strategy",
        "server-side",
        "--log-format",
        "json",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    final = json.loads(again.stderr.strip().splitlines()[-1])
    assert final["message"] == "run converged" and final["applied"] == {}


def test_local_with_a_bad_manifest_names_it(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n"
    )
    result = cli("--local", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.yaml" in result.stderr and "Bad_Name" in result.stderr


def test_a_local_run_that_finds_no_controllers_says_so_and_where_it_looked(
    tmp_path: Path,
) -> None:
    """examples/gitops keeps its controllers in subdirectories: without -R the report itself
    says none were found, where the run looked, and to add -R; with -R they run."""
    gitops = str(ROOT / "examples" / "gitops")
    shallow = reconcile("--local", gitops, "--report-format", "json", cwd=tmp_path)
    (warning,) = [w for w in json.loads(shallow.stdout)["warnings"] if "no controllers" in w]
    assert gitops in warning and "add -R" in warning, warning
    deep = reconcile("--local", gitops, "-R", "--dry-run", "--report-format", "json", cwd=tmp_path)
    assert not [w for w in json.loads(deep.stdout)["warnings"] if "no controllers" in w]


def test_a_long_pass_logs_its_progress_off_a_terminal(tmp_path: Path) -> None:
    """Standard error is a pipe here, as in a CronJob: every --progress-interval of a pass, one
    line says how far it is; --progress-interval 0 says nothing."""
    example, one_parent = tmp_path / "hello-world", tmp_path / "one-parent"
    shutil.copytree(EXAMPLES / "hello-world", example)
    shutil.copytree(EXAMPLES / "hello-world", one_parent)
    more = "".join(
        f"---\napiVersion: example.com/v1\nkind: HelloWorld\nmetadata:\n  name: friend-{i}\n"
        f"  namespace: hello\nspec:\n  who: Friend {i}\n"
        for i in range(7)
    )
    with (example / "hello.yaml").open("a") as stream:
        stream.write(more)
    args = ("--workers", "1", "--report-format", "none")
    done = reconcile("--local", str(example), *args, "--progress-interval", "200ms", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if "reconcile.progress" in line]
    assert lines, done.stderr[-3000:]
    assert re.search(
        r"pass 1, \d+s: hello-controller \d+ of 8 parents; this pass \d+ parents, \d+ writes, "
        r"0 errors, hooks \d+\.\ds$",
        lines[0],
    ), lines[0]
    quiet = reconcile("--local", str(one_parent), *args, "--progress-interval", "0", cwd=tmp_path)
    assert quiet.returncode == 0 and "reconcile.progress" not in quiet.stderr
