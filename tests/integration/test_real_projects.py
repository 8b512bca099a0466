"""Controllers of real projects, run unchanged but for their hook URLs, on both backends through
the real command: the first run makes what they want and ends converged (exit 0), a second run
and a `--dry-run` send no write and exit 0.

Kubeflow Pipelines' multi-user profile controller (tests/data/kubeflow-pipelines) takes
Namespaces as parents and returns a status the Namespace kind has no place for
(`kubeflow-pipelines-ready`), plus `observedGeneration` for the CompositeController: the server
drops both, and keeps `phase`. Its two published forms are run: the CompositeController of
2.4.0 over every Namespace, and the DecoratorController over labelled ones that replaced it."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import AlreadyExists
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE, TESTED_USER, free_port
from tests.support.mc_examples import serving_process
from tests.support.poll import eventually

KFP = Path(__file__).resolve().parents[1] / "data" / "kubeflow-pipelines"
KFP_CONTROLLERS = {"2.4.0": "composite-controller.yaml", "ebaaf75": "decorator-controller.yaml"}
READS = frozenset({"list", "get", "watch", "discover"})
KFP_HOOK_URL = "http://kubeflow-pipelines-profile-controller/sync"
# What the controller makes in a Namespace labelled pipelines.kubeflow.org/enabled=true.
KFP_CHILDREN = {
    ("v1", "secrets", "mlpipeline-minio-artifact"),
    ("v1", "configmaps", "metadata-grpc-configmap"),
    ("apps/v1", "deployments", "ml-pipeline-visualizationserver"),
    ("apps/v1", "deployments", "ml-pipeline-ui-artifact"),
    ("v1", "services", "ml-pipeline-visualizationserver"),
    ("v1", "services", "ml-pipeline-ui-artifact"),
    ("networking.istio.io/v1alpha3", "destinationrules", "ml-pipeline-visualizationserver"),
    ("security.istio.io/v1beta1", "authorizationpolicies", "ml-pipeline-visualizationserver"),
}


@contextlib.contextmanager
def kfp_hook(version: str) -> Iterator[str]:
    """The revision's own `sync.py`, unchanged, serving on a loopback port (its settings from
    the environment, as its Deployment gives them): the hook URL."""
    port = free_port()
    env = {
        **os.environ,
        "CONTROLLER_PORT": str(port),
        "KFP_VERSION": "2.4.0",
        "DISABLE_ISTIO_SIDECAR": "false",
        "MINIO_ACCESS_KEY": "AKIAKFPTESTACCESS",
        "MINIO_SECRET_KEY": "kfp-test-secret-key-0123",
    }
    script = KFP / version / "sync.py"
    process = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        cwd=script.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with serving_process(process, port, lambda: f"{script} did not serve on port {port}"):
        yield f"http://127.0.0.1:{port}/sync"


def kfp_controller(version: str, url: str, directory: Path) -> Path:
    text = (KFP / version / KFP_CONTROLLERS[version]).read_text()
    assert KFP_HOOK_URL in text
    path = directory / KFP_CONTROLLERS[version]
    path.write_text(text.replace(KFP_HOOK_URL, url))
    return path


def namespaces(suffix: str) -> list[dict[str, Any]]:
    """A profile's Namespace (pipelines enabled) and two without pipelines."""
    enabled = {"pipelines.kubeflow.org/enabled": "true"}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{suffix}"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"other-{suffix}"}},
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": f"kfp-{suffix}", "labels": enabled},
        },
    ]


def report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stdout, done.stderr
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


def writes(run: dict[str, Any]) -> dict[str, int]:
    requests: dict[str, int] = run["requests"]
    return {
        verb: n for verb, n in requests.items() if verb not in ("list", "get", "watch", "discover")
    }


@pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="the profile controller ran on Metacontroller-era clusters, and runs on today's",
)
@pytest.mark.parametrize("version", sorted(KFP_CONTROLLERS))
def test_kubeflow_pipelines_profile_controller_converges(
    backend: Backend, tmp_path: Path, version: str, kube_release: str
) -> None:
    suffix = uuid.uuid4().hex[:6]
    objects = tmp_path / "objects"
    objects.mkdir()
    (objects / "namespaces.yaml").write_text(yaml.safe_dump_all(namespaces(suffix)))
    with kfp_hook(version) as url:
        controller = kfp_controller(version, url, tmp_path)
        if backend.name == "memory":
            made, again, preview = _local_runs(tmp_path, objects, controller, kube_release)
        else:
            made, again, preview = _live_runs(backend, tmp_path, objects, controller)
    assert made.returncode == 0, made.stdout + made.stderr
    first = report(made)
    assert first["errors"] == [] and first["converged"], first["errors"]
    assert any("kubeflow-pipelines-ready" in w for w in first["warnings"]), first["warnings"]
    made_children = {
        (a["object"]["apiVersion"], a["resource"].split(".")[0], a["object"]["name"])
        for a in _actions(first)
        if a["action"] == "create" and a["object"]["namespace"] == f"kfp-{suffix}"
    }
    assert made_children == KFP_CHILDREN
    # nothing else: no status write on any Namespace (the server would keep none of it)
    assert len(_actions(first)) == len(KFP_CHILDREN), [a["object"] for a in _actions(first)]
    for done in (again, preview):
        assert done.returncode == 0, done.stdout + done.stderr
        run = report(done)
        assert writes(run) == {}, run["requests"]
        assert run["summary"]["applied"] == 0 and run["summary"]["pending"] == 0


def _actions(report: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for pass_ in report.get("passes") or []:
        for controller in pass_["controllers"]:
            for parent in controller["parents"]:
                for action in parent["actions"]:
                    found.append(action)
    return found


def _local_runs(
    tmp_path: Path, objects: Path, controller: Path, release: str
) -> tuple[subprocess.CompletedProcess[str], ...]:
    state = tmp_path / "state"
    common = ("--report-format", "json", "--kubernetes-version", release)
    made = reconcile(
        *("--local", str(KFP / "istio-crds.yaml"), "--local", str(objects)),
        *("--local", str(controller), "--output-dir", str(state), *common),
        cwd=tmp_path,
    )
    again = reconcile(
        "--local", str(state), "-R", "--output-dir", str(tmp_path / "again"), *common, cwd=tmp_path
    )
    preview = reconcile("--local", str(state), "-R", "--dry-run", *common, cwd=tmp_path)
    return made, again, preview


def _live_runs(
    backend: Backend, tmp_path: Path, objects: Path, controller: Path
) -> tuple[subprocess.CompletedProcess[str], ...]:
    admin = backend.admin
    crds = admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in yaml.safe_load_all((KFP / "istio-crds.yaml").read_text()):
        with contextlib.suppress(AlreadyExists):  # one control plane serves several tests
            admin.create(crds, crd)
    for group_version, plural in (
        ("networking.istio.io/v1alpha3", "destinationrules"),
        ("security.istio.io/v1beta1", "authorizationpolicies"),
    ):
        served = functools.partial(admin.discover, group_version, plural)
        eventually(served, what=plural)
    ns = admin.discover("v1", "namespaces")
    made_namespaces = list(yaml.safe_load_all((objects / "namespaces.yaml").read_text()))
    for obj in made_namespaces:
        admin.create(ns, obj)
    try:
        return _runs(backend, tmp_path, controller)
    finally:  # the next test's controller must not find this test's profile
        for obj in made_namespaces:
            backend.delete_quietly(ns, obj["metadata"]["name"], None)


def _runs(
    backend: Backend, tmp_path: Path, controller: Path
) -> tuple[subprocess.CompletedProcess[str], ...]:
    assert backend.plane is not None
    connect = ("--kubeconfig", str(backend.plane.kubeconfig), "--context", TESTED_USER)
    args = (
        *connect,
        *("--controllers", str(controller), "--no-cluster-controllers"),
        *("--report-format", "json", "--max-duration", "60"),
    )
    made = reconcile(*args, cwd=tmp_path)
    assert made.returncode == 0, (report(made)["errors"], made.stderr[-3000:])
    mark = backend.mark()
    again = reconcile(*args, cwd=tmp_path)
    preview = reconcile(*args, "--dry-run", cwd=tmp_path)
    assert backend.mutations_since(mark) == {}, again.stdout[-6000:]
    return made, again, preview
