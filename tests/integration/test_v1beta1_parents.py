"""Metacontroller v0.x's tutorials on a 1.20 cluster: the parent's CRD written as
`apiextensions.k8s.io/v1beta1` (one `version`, no schema, so every field is kept), the
hello-world controller unchanged. The same files run on the real 1.20 server and in
`--local --kubernetes-version 1.20`, converge, and a second run sends nothing; the local run's
output loads again converged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from reconcile.cluster.types import Obj
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controllers import run
from tests.support.controlplane import OLDEST_RELEASE
from tests.support.poll import eventually

HELLO_WORLD = Path(__file__).parents[2] / "examples" / "hello-world"
GROUP = "tutorial.example.com"


def crd(group: str) -> Obj:
    """As the v0.x tutorials wrote it."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"helloworlds.{group}"},
        "spec": {
            "group": group,
            "version": "v1",
            "names": {"kind": "HelloWorld", "plural": "helloworlds", "singular": "helloworld"},
            "scope": "Namespaced",
            "subresources": {"status": {}},
        },
    }


def hello(namespace: str, group: str) -> Obj:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "HelloWorld",
        "metadata": {"name": "your-name", "namespace": namespace},
        # `greeting` is in no schema: a v1beta1 CRD keeps it
        "spec": {"who": "Your Name", "greeting": {"language": "en"}},
    }


def tutorial(directory: Path, group: str, *extra: Obj) -> Path:
    """The hello-world controller and its command hook, beside `extra` manifests."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("hooks.py", "hooklib.py"):
        shutil.copy(HELLO_WORLD / name, directory / name)
    controller = yaml.safe_load((HELLO_WORLD / "controller.yaml").read_text())
    controller["spec"]["parentResource"]["apiVersion"] = f"{group}/v1"
    (directory / "controller.yaml").write_text(yaml.safe_dump(controller))
    if extra:
        (directory / "objects.yaml").write_text(yaml.safe_dump_all(extra))
    return directory


@pytest.mark.releases(OLDEST_RELEASE, why="apiextensions.k8s.io/v1beta1 is served until 1.22")
def test_a_v1beta1_parent_converges_on_1_20(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    group = f"{namespace}.example.com"
    definition = crd(group)
    backend.admin.create(backend.admin.discover(definition["apiVersion"], "crds"), definition)
    parents = eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "helloworlds"), what="helloworlds"
    )
    backend.admin.create(parents, hello(namespace, group))
    controllers = tutorial(tmp_path / "tutorial", group)

    first = run(backend, controllers / "controller.yaml")
    assert first.errors == [] and first.converged, first.errors
    parent = backend.cluster.get(parents, "your-name", namespace=namespace)
    assert parent["spec"]["greeting"] == {"language": "en"}
    # a v1beta1 CRD keeps every status field: observedGeneration too
    assert parent["status"] == {"pods": 1, "observedGeneration": 1}
    pods = backend.cluster.discover("v1", "pods")
    assert backend.cluster.get(pods, "your-name", namespace=namespace)["spec"]["containers"]

    mark = backend.mark()
    again = run(backend, controllers / "controller.yaml")
    assert again.errors == [] and again.converged, again.errors
    assert backend.mutations_since(mark) == {}


def test_local_1_20_runs_the_tutorial_and_its_output_loads_converged(tmp_path: Path) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hello"}}
    files = tutorial(tmp_path / "tutorial", GROUP, namespace, crd(GROUP), hello("hello", GROUP))
    out = tmp_path / "rendered"
    release = ["--kubernetes-version", "1.20"]
    first = reconcile("--local", str(files), *release, "--output-dir", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    dumped = yaml.safe_load((out / "hello" / f"helloworlds.{GROUP}" / "your-name.yaml").read_text())
    assert dumped["spec"]["greeting"] == {"language": "en"}
    assert dumped["status"] == {"pods": 1, "observedGeneration": 1}

    again = reconcile("--local", str(out), "-R", *release, "--report-format", "json", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    report = json.loads(again.stdout)
    assert report["errors"] == [] and report["converged"] is True
    assert report["summary"]["applied"] == 0 and report["summary"]["passes"] == 1
