"""The GitHub Action (`github-actions/action.yml`), its steps run as the runner runs them, against
the real control plane: a preview that does not fail the job, the outputs, the summary, a
change that fails only when asked, an apply, and errors as at most 10 annotations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.actions import run_action
from tests.support.backends import Backend
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import EXAMPLES, load_example

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "github-actions"

pytestmark = pytest.mark.controlplane


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One runner's temp directory for the module: the first run installs the package there
    (from this repository, as the action does by default), the others find it installed."""
    return tmp_path_factory.mktemp("runner-temp")


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


def test_preview_then_apply(
    runner_temp: Path, kubeconfig: str, hello: str, live_backend: Backend, tmp_path: Path
) -> None:
    inputs = {"kubeconfig": kubeconfig, "args": controller_args()}
    mark = live_backend.mark()
    preview = run_action(ACTION, {**inputs, "dry-run": "true"}, runner_temp, cwd=tmp_path)
    assert preview.returncode == 0, preview.stdout[-2000:] + preview.stderr[-2000:]
    assert live_backend.mutations_since(mark) == {}
    assert preview.outputs["exit-code"] == "2"
    assert preview.outputs["changes-pending"] == "true"
    report = json.loads(Path(preview.outputs["report"]).read_text())
    assert report["dryRun"] is True and report["outcome"] == "pending"
    assert "### reconcile: 2 changes pending" in preview.summary
    assert kubeconfig not in preview.stdout + preview.stderr
    config = runner_temp / "reconcile-kubeconfig"
    assert config.stat().st_mode & 0o777 == 0o600

    strict = run_action(
        ACTION,
        {**inputs, "dry-run": "true", "fail-on-changes": "true"},
        runner_temp,
        cwd=tmp_path,
    )
    assert strict.returncode == 2 and strict.outputs["changes-pending"] == "true"

    applied = run_action(ACTION, inputs, runner_temp, cwd=tmp_path)
    assert applied.returncode == 0, applied.stdout[-2000:]
    assert applied.outputs["exit-code"] == "0" and applied.outputs["changes-pending"] == "false"
    pods = live_backend.admin.discover("v1", "pods")
    live_backend.admin.get(pods, "your-name", namespace=hello)


def test_errors_become_at_most_ten_annotations(
    runner_temp: Path, kubeconfig: str, tmp_path: Path
) -> None:
    missing = " ".join(f"--controller missing-{i:02d}" for i in range(12))
    failed = run_action(
        ACTION,
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
                if "uses" in step:
                    assert step["uses"].split("@")[0].endswith("/github-actions")
                    assert set(step.get("with", {})) <= set(action["inputs"]), workflow.name


def test_a_missing_cluster_is_an_error_not_a_crash(runner_temp: Path, tmp_path: Path) -> None:
    broken = run_action(
        ACTION,
        {"kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n", "args": ""},
        runner_temp,
        cwd=tmp_path,
    )
    assert broken.returncode == 1 and broken.outputs["exit-code"] == "1"
    assert broken.annotations and "Traceback" not in broken.stdout + broken.stderr
