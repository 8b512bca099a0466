"""Loading an example's manifests into a backend, and serving its hooks as a webhook.

The live cluster is shared by the tests, so names an example picks for itself (its namespaces,
its cluster-scoped objects, the objects it puts in `default`) get a per-test suffix: every
string equal to such a name is renamed, which keeps references (spec fields, selectors) true.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster import AlreadyExists, ApiError, NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.meta import metadata
from reconcile.runner.sources import yaml_documents
from tests.support.backends import Backend
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, str):
        return names.get(value, value)
    return value


class LoadedExample:
    def __init__(self, backend: Backend, names: dict[str, str]) -> None:
        self.backend = backend
        self.names = names
        self.created: list[Obj] = []

    def name(self, original: str) -> str:
        return self.names.get(original, original)

    def cleanup(self) -> None:
        """Delete what the example created, parents first and waiting for them, so that later
        tests' controllers (the CRDs are shared) do not find them."""
        for obj in reversed(self.created):
            resource = self.backend.admin.discover(obj["apiVersion"], obj["kind"])
            meta = metadata(obj)
            with contextlib.suppress(ApiError):
                # A test that failed half-way may leave a controller's finalizer behind.
                current = self.backend.admin.get(
                    resource, meta["name"], namespace=meta.get("namespace")
                )
                if metadata(current).get("finalizers") and "." in obj["apiVersion"].split("/")[0]:
                    current["metadata"]["finalizers"] = []
                    self.backend.admin.update(resource, current)
            with contextlib.suppress(NotFound):
                self.backend.admin.delete(resource, meta["name"], namespace=meta.get("namespace"))
        for obj in self.created:
            if "." not in obj["apiVersion"].split("/")[0]:
                continue  # built-in kinds go with their namespace
            resource = self.backend.admin.discover(obj["apiVersion"], obj["kind"])
            meta = metadata(obj)
            eventually(
                partial(_gone, self.backend, resource, meta["name"], meta.get("namespace")),
                what=f"{obj['kind']} {meta['name']} to go",
            )


def _gone(backend: Backend, resource: ResourceInfo, name: str, namespace: str | None) -> bool:
    try:
        backend.admin.get(resource, name, namespace=namespace)
    except NotFound:
        return True
    return False


ExampleLoader = Callable[..., LoadedExample]


def load_example(backend: Backend, example: str, *files: str) -> LoadedExample:
    """Prefer the `example` fixture, which also cleans up."""
    return _load_example(backend, example, *files)


def _load_example(backend: Backend, example: str, *files: str) -> LoadedExample:
    """Create the example's CRDs (once per cluster) and objects, renamed for this test."""
    suffix = uuid.uuid4().hex[:6]
    objects = [obj for f in files for _, _, obj in yaml_documents(EXAMPLES / example / f)]
    names: dict[str, str] = {}
    for obj in objects:
        kind, meta = obj["kind"], metadata(obj)
        if kind == "CustomResourceDefinition":
            continue
        if kind == "Namespace" or meta.get("namespace") in (None, "default"):
            names[meta["name"]] = f"{meta['name']}-{suffix}"
    for obj in objects:
        if obj["kind"] == "CustomResourceDefinition":
            _ensure_crd(backend, obj)
    loaded = LoadedExample(backend, names)
    for obj in objects:
        if obj["kind"] == "CustomResourceDefinition":
            continue
        renamed = _rename(obj, names)
        resource = backend.admin.discover(renamed["apiVersion"], renamed["kind"])
        if resource.namespaced:
            renamed["metadata"].setdefault("namespace", "default")
        loaded.created.append(backend.admin.create(resource, renamed))
    return loaded


def _ensure_crd(backend: Backend, crd: Obj) -> None:
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    with contextlib.suppress(AlreadyExists):  # another test loaded the same example
        backend.admin.create(crds, crd)
    spec = crd["spec"]
    eventually(
        lambda: backend.cluster.discover(
            f"{spec['group']}/{spec['versions'][0]['name']}", spec["names"]["plural"]
        ),
        what=f"{crd['metadata']['name']} to be served",
    )


@contextmanager
def serve_example_hooks(example: str) -> Iterator[str]:
    """Run the example's hooks.py as a webhook server; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / example / "hooks.py"), "--serve", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving on "), f"hooks.py --serve printed {line!r}"
        yield line.removeprefix("serving on ").strip().rstrip("/")
    finally:
        process.terminate()
        process.wait(timeout=10)


def webhook_controller(example: str, base_url: str, directory: Path) -> Path:
    """The example's webhook/controller.yaml pointed at `base_url` instead of 127.0.0.1:8080."""
    text = (EXAMPLES / example / "webhook" / "controller.yaml").read_text()
    assert "http://127.0.0.1:8080" in text
    path = directory / "controller.yaml"
    path.write_text(text.replace("http://127.0.0.1:8080", base_url))
    list(yaml.safe_load_all(path.read_text()))  # valid YAML, one document or more
    return path


@contextmanager
def controller_file(example: str, variant: str, tmp_path: Path) -> Iterator[Path]:
    if variant == "command":
        yield EXAMPLES / example / "controller.yaml"
        return
    with serve_example_hooks(example) as url:
        yield webhook_controller(example, url, tmp_path)
