"""The GitHub Action (`github-actions/action.yml`), its steps run as the runner runs them, against
the real control plane: the install, a preview that does not fail the job, the outputs, the
summary, a change that fails only when asked, an apply, and errors as at most 10 annotations.

The first test installs the package as the action does (from the repository that holds it, a
copy of this one); the others run this test run's own environment, their install step skipped
(an install takes a minute)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from reconcile.cluster import NotFound
from tests.support.actions import ActionRun, run_action
from tests.support.backends import Backend
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import EXAMPLES, load_example

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "github-actions"

pytestmark = pytest.mark.controlplane


@pytest.fixture
def runner_temp(tmp_path: Path) -> Path:
    """A runner's temp directory whose venv is this test run's environment."""
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    (temp / "reconcile-venv").symlink_to(sys.prefix)
    return temp


def run_installed(
    inputs: dict[str, str], runner_temp: Path, *, cwd: Path, token: str = ""
) -> ActionRun:
    """The action in `runner_temp`, its install skipped; `token` the workflow's."""
    return run_action(
        ACTION, inputs, runner_temp, cwd=cwd, github={"token": token}, skip={"install"}
    )


@pytest.fixture
def kubeconfig(control_plane: ControlPlane) -> str:
    """What a repository secret would hold: a kubeconfig for the tested user only."""
    return json.dumps(control_plane._kubeconfig_dict([TESTED_USER], TESTED_USER))


@pytest.fixture
def hello(live_backend: Backend) -> Iterator[str]:
    loaded = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    yield loaded.name("hello")
    loaded.cleanup()


def controller_args() -> str:
    controller = EXAMPLES / "hello-world" / "controller.yaml"
    return f"--controllers {controller} --controller hello-controller --no-cluster-controllers"


def action_repository(tmp_path: Path) -> Path:
    """The action in a copy of this repository (the package's files and the action's): the
    install is keyed on the package's files, which must not change while the test runs, and
    this working tree may."""
    repository = tmp_path / "action-repository"
    shutil.copytree(ACTION, repository / "github-actions")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "reconcile", repository / "reconcile", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, repository / name)
    return repository / "github-actions"


@pytest.mark.long
@pytest.mark.timeout(900)  # pip, on a loaded machine, may take minutes
def test_install_preview_then_apply(
    kubeconfig: str, hello: str, live_backend: Backend, tmp_path: Path
) -> None:
    """The package installed as the action installs it by default (from the repository that
    holds the action), once: the later runs find it installed."""
    action = action_repository(tmp_path)
    runner_temp = tmp_path / "runner-temp"
    inputs = {"kubeconfig": kubeconfig, "args": controller_args()}
    mark = live_backend.mark()
    preview = run_action(action, {**inputs, "dry-run": "true"}, runner_temp, cwd=tmp_path)
    assert preview.returncode == 0, preview.stdout[-2000:] + preview.stderr[-2000:]
    venv = runner_temp / "reconcile-venv"
    assert (venv / ".reconcile-install-key").read_text().startswith("reconcile-venv-Linux-X64-")
    assert "reconcile is installed in" not in preview.stdout
    assert live_backend.mutations_since(mark) == {}
    assert preview.outputs["exit-code"] == "2"
    assert preview.outputs["changes-pending"] == "true"
    report = json.loads(Path(preview.outputs["report"]).read_text())
    assert report["dryRun"] is True and report["outcome"] == "pending"
    assert "### reconcile: 2 changes pending" in preview.summary
    assert kubeconfig not in preview.stdout + preview.stderr
    config = runner_temp / "reconcile-kubeconfig"
    assert config.stat().st_mode & 0o777 == 0o600
    # the comment step's interpreter is the installed venv's: it has what comment.py imports
    commenting = subprocess.run(
        [venv / "bin" / "python", action / "comment.py", "--markdown=none", "--key=k"],
        env={"PATH": os.environ["PATH"], "GITHUB_EVENT_NAME": "push"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert commenting.returncode == 0, commenting.stderr[-2000:]
    assert "no comment: the event is push" in commenting.stdout

    checked = run_action(action, {**inputs, "dry-run": "server"}, runner_temp, cwd=tmp_path)
    assert "reconcile is installed in" in checked.stdout
    assert checked.outputs["exit-code"] == "2", checked.stdout[-2000:] + checked.stderr[-2000:]
    assert json.loads(Path(checked.outputs["report"]).read_text())["dryRunMode"] == "server"
    pods = live_backend.admin.discover("v1", "pods")
    with pytest.raises(NotFound):  # checked by the API server, not created
        live_backend.admin.get(pods, "your-name", namespace=hello)

    strict = run_action(
        action,
        {**inputs, "dry-run": "true", "fail-on-changes": "true"},
        runner_temp,
        cwd=tmp_path,
    )
    assert strict.returncode == 2 and strict.outputs["changes-pending"] == "true"

    applied = run_action(action, inputs, runner_temp, cwd=tmp_path)
    assert applied.returncode == 0, applied.stdout[-2000:]
    assert applied.outputs["exit-code"] == "0" and applied.outputs["changes-pending"] == "false"
    live_backend.admin.get(pods, "your-name", namespace=hello)


def test_errors_become_at_most_ten_annotations(
    runner_temp: Path, kubeconfig: str, tmp_path: Path
) -> None:
    missing = " ".join(f"--controller missing-{i:02d}" for i in range(12))
    failed = run_installed(
        {"kubeconfig": kubeconfig, "args": f"{controller_args()} {missing}"},
        runner_temp,
        cwd=tmp_path,
    )
    assert failed.returncode == 1 and failed.outputs["exit-code"] == "1"
    assert len(failed.annotations) == 10
    assert failed.annotations[0] == (
        "::error title=reconcile::--controller missing-00: no such controller"
    )
    assert failed.annotations[-1].startswith("::error title=reconcile::3 more errors")


def test_the_example_workflows_use_what_the_action_declares() -> None:
    action = yaml.safe_load((ACTION / "action.yml").read_text())
    for workflow in sorted((ACTION / "examples").glob("*.yml")):
        spec = yaml.safe_load(workflow.read_text())
        for job in spec["jobs"].values():
            for step in job["steps"]:
                if "uses" not in step:
                    continue
                name, _, version = step["uses"].partition("@")
                if name.endswith("/github-actions"):
                    assert set(step.get("with", {})) <= set(action["inputs"]), workflow.name
                else:  # another action (actions/checkout): pinned by commit
                    assert re.fullmatch(r"[0-9a-f]{40}", version), (workflow.name, name)


def test_a_missing_cluster_is_an_error_not_a_crash(runner_temp: Path, tmp_path: Path) -> None:
    broken = run_installed(
        {"kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n", "args": ""},
        runner_temp,
        cwd=tmp_path,
    )
    assert broken.returncode == 1 and broken.outputs["exit-code"] == "1"
    assert broken.annotations and "Traceback" not in broken.stdout + broken.stderr


@pytest.mark.parametrize("value", ["True", "yes", "1", "TRUE", "ture", " true", "on"])
@pytest.mark.parametrize("flag", ["dry-run", "fail-on-changes"])
def test_a_boolean_input_other_than_true_or_false_fails_before_anything_runs(
    runner_temp: Path,
    kubeconfig: str,
    hello: str,
    live_backend: Backend,
    tmp_path: Path,
    flag: str,
    value: str,
) -> None:
    mark = live_backend.mark()
    inputs = {"kubeconfig": kubeconfig, "args": controller_args(), flag: value}
    refused = run_installed(inputs, runner_temp, cwd=tmp_path)
    assert refused.returncode == 1
    allowed = "true, server or false" if flag == "dry-run" else "true or false"
    assert refused.annotations == [
        f"::error title=reconcile::input {flag} must be {allowed}, not '{value}'"
    ]
    assert live_backend.requests_since(mark) == {}


@pytest.mark.parametrize(
    "args", ["--git-ref feat'x", '--controller "unclosed', "--manifests apps \\"]
)
def test_arguments_that_do_not_split_fail_instead_of_running_with_none(
    runner_temp: Path,
    kubeconfig: str,
    hello: str,
    live_backend: Backend,
    tmp_path: Path,
    args: str,
) -> None:
    mark = live_backend.mark()
    refused = run_installed(
        {"kubeconfig": kubeconfig, "args": f"{controller_args()} {args}"},
        runner_temp,
        cwd=tmp_path,
    )
    assert refused.returncode == 1 and refused.outputs["exit-code"] == "1"
    assert len(refused.annotations) == 1
    assert "input args cannot be split as a shell would" in refused.annotations[0]
    assert live_backend.requests_since(mark) == {}


def test_hooks_never_see_the_kubeconfig_input(
    runner_temp: Path, kubeconfig: str, live_backend: Backend, tmp_path: Path
) -> None:
    """A command hook prints its environment into the object it makes: neither the kubeconfig
    nor its token is there (the kubeconfig is a file only reconcile reads), nor the workflow's
    token (the input github-token)."""
    hook = tmp_path / "env-hook.py"
    hook.write_text(
        "import json, os, sys\n"
        "request = json.load(sys.stdin)\n"
        "parent = request['parent']\n"
        "env = json.dumps(dict(os.environ), sort_keys=True)\n"
        "print(json.dumps({'status': {}, 'children': [{'apiVersion': 'v1', 'kind': 'ConfigMap',"
        " 'metadata': {'name': parent['metadata']['name'] + '-env', 'namespace':"
        " parent['metadata']['namespace']}, 'data': {'env': env}}]}))\n"
    )
    loaded = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    try:
        controller = yaml.safe_load((EXAMPLES / "hello-world" / "controller.yaml").read_text())
        controller["spec"]["childResources"] = [{"apiVersion": "v1", "resource": "configmaps"}]
        controller["spec"]["hooks"]["sync"] = {"command": {"argv": ["python3", str(hook)]}}
        controllers = tmp_path / "controller.yaml"
        controllers.write_text(yaml.safe_dump(controller))
        args = f"--controllers {controllers} --no-cluster-controllers"
        comment_token = "ghs_" + "workflowtoken" * 3
        done = run_installed(
            {"kubeconfig": kubeconfig, "args": args}, runner_temp, cwd=tmp_path, token=comment_token
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        configmaps = live_backend.admin.discover("v1", "configmaps")
        made = live_backend.admin.get(configmaps, "your-name-env", namespace=loaded.name("hello"))
        seen = json.loads(made["data"]["env"])
        assert "KUBECONFIG_CONTENT" not in seen
        token = json.loads(kubeconfig)["users"][0]["user"]["token"]
        assert token not in made["data"]["env"]
        # nor the token that posts the pull request comment (the comment's own step has it)
        assert comment_token not in made["data"]["env"]
        assert comment_token not in done.stdout + done.stderr
    finally:
        loaded.cleanup()
