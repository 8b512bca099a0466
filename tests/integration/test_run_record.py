"""The run record on the real control plane, through the real command: after a run that
succeeded, failed, or stopped at its budget, one ConfigMap beside the Lease says how it went;
`reconcile status` prints it (exit 1 when the last run failed). Dry runs and runs skipped
because the lock is held write none."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import NotFound
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import ControlPlane
from tests.support.examples import EXAMPLES, LoadedExample, load_example

pytestmark = pytest.mark.controlplane

CONTROLLER = EXAMPLES / "hello-world" / "controller.yaml"


@pytest.fixture
def hello(live_backend: Backend) -> Iterator[LoadedExample]:
    loaded = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    yield loaded
    loaded.cleanup()


def controller_with(tmp_path: Path, argv: list[str], timeout: str = "10s") -> Path:
    """hello-world's controller with another command hook."""
    controller = yaml.safe_load(CONTROLLER.read_text())
    controller["spec"]["hooks"]["sync"]["command"] = {"argv": argv, "timeout": timeout}
    path = tmp_path / "controller.yaml"
    path.write_text(yaml.safe_dump(controller))
    return path


def run_with_lock(
    control_plane: ControlPlane, namespace: str, controller: Path, tmp_path: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return reconcile(
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--controllers",
        str(controller),
        "--controller",
        "hello-controller",
        "--no-cluster-controllers",
        "--lock",
        f"{namespace}/reconcile",
        "--report-format",
        "json",
        *extra,
        cwd=tmp_path,
        env={"POD_NAME": "reconcile-28412345-abcde"},
    )


def record(live_backend: Backend, namespace: str) -> dict[str, str]:
    configmaps = live_backend.admin.discover("v1", "configmaps")
    data: dict[str, str] = live_backend.admin.get(configmaps, "reconcile", namespace=namespace)[
        "data"
    ]
    return data


def status(control_plane: ControlPlane, namespace: str, *extra: str) -> Any:
    return reconcile(
        "status", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig), *extra,
        cwd=control_plane.workdir,
    )  # fmt: skip


def test_a_run_that_succeeds_then_one_that_fails(
    control_plane: ControlPlane, live_backend: Backend, hello: LoadedExample, tmp_path: Path
) -> None:
    namespace = hello.name("hello")
    before = datetime.now(UTC).replace(microsecond=0)
    done = run_with_lock(control_plane, namespace, CONTROLLER, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    data = record(live_backend, namespace)
    assert data["outcome"] == "succeeded" and data["exitCode"] == "0"
    assert json.loads(data["applied"])["create"] == 1
    assert data["holder"] == "reconcile-28412345-abcde" and data["converged"] == "true"
    assert (
        before
        <= datetime.fromisoformat(data["startTime"])
        <= datetime.fromisoformat(data["endTime"])
    )
    assert "errors" not in data and "gitCommit" not in data
    shown = status(control_plane, namespace)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert shown.stdout.startswith(f"{namespace}/reconcile: succeeded, exit 0, ended ")
    as_json = json.loads(status(control_plane, namespace, "-o", "json").stdout)
    assert [(r["name"], r["exitCode"]) for r in as_json] == [("reconcile", "0")]

    # a dry run leaves the record as it was
    dry = run_with_lock(control_plane, namespace, CONTROLLER, tmp_path, "--dry-run")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert record(live_backend, namespace) == data

    broken = controller_with(
        tmp_path, ["python3", "-c", "import sys; sys.exit('the hook failed on purpose')"]
    )
    failed = run_with_lock(control_plane, namespace, broken, tmp_path)
    assert failed.returncode == 1
    data = record(live_backend, namespace)
    assert data["outcome"] == "failed" and data["exitCode"] == "1"
    assert "the hook failed on purpose" in data["errors"] and data["errorCount"] == "1"
    shown = status(control_plane, namespace)
    assert shown.returncode == 1
    assert "failed, exit 1" in shown.stdout and "the hook failed on purpose" in shown.stdout


def test_a_run_stopped_by_its_budget_says_so(
    control_plane: ControlPlane, live_backend: Backend, hello: LoadedExample, tmp_path: Path
) -> None:
    namespace = hello.name("hello")
    slow = controller_with(tmp_path, ["sleep", "30"], timeout="60s")
    done = run_with_lock(control_plane, namespace, slow, tmp_path, "--max-duration", "3s")
    assert done.returncode == 1, done.stderr[-3000:]
    data = record(live_backend, namespace)
    assert (data["outcome"], data["exitCode"]) == ("stopped", "1")
    assert "internal error" not in done.stdout
    # the lock was released within the budget's reserve: the next run is not skipped
    leases = live_backend.admin.discover("coordination.k8s.io/v1", "leases")
    lease = live_backend.admin.get(leases, "reconcile", namespace=namespace)
    assert "holderIdentity" not in lease["spec"]


def test_a_skipped_run_and_a_missing_record(
    control_plane: ControlPlane, live_backend: Backend, hello: LoadedExample, tmp_path: Path
) -> None:
    namespace = hello.name("hello")
    empty = status(control_plane, namespace)
    assert empty.returncode == 1 and "no run record in namespace" in empty.stdout
    leases = live_backend.admin.discover("coordination.k8s.io/v1", "leases")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    live_backend.admin.create(
        leases,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "reconcile", "namespace": namespace},
            "spec": {
                "holderIdentity": "another-run",
                "leaseDurationSeconds": 600,
                "acquireTime": now,
                "renewTime": now,
            },
        },
    )
    skipped = run_with_lock(control_plane, namespace, CONTROLLER, tmp_path)
    assert skipped.returncode == 0 and json.loads(skipped.stdout)["skipped"]
    configmaps = live_backend.admin.discover("v1", "configmaps")
    with pytest.raises(NotFound):
        live_backend.admin.get(configmaps, "reconcile", namespace=namespace)
