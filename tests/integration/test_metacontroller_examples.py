"""Metacontroller's own examples (tests/data/metacontroller/examples, vendored unchanged) run
with `reconcile` in place of Metacontroller, on both backends, with their controllers read
from their files and, under Metacontroller's own CRDs, from the cluster. Each hook server is
the example's `sync.py`, unchanged, on a loopback port; the checks are those of the example's
`test.sh` (which polls until they hold; a `reconcile` run ends converged, so they hold at its
end)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from reconcile.cluster import NotFound
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.controllers import run, write_controllers
from tests.support.mc_crds import THEIRS, crds_installed, created_as_stored
from tests.support.mc_examples import Example, hook_server, pointed_at
from tests.support.poll import eventually


@pytest.fixture
def example(backend: Backend) -> Iterator[Callable[[str], Example]]:
    made: list[Example] = []

    def make(name: str) -> Example:
        made.append(Example(name, backend))
        return made[-1]

    yield make
    for item in reversed(made):
        item.cleanup()


def run_example(
    example: Example, backend: Backend, tmp_path: Path, source: str, base_url: str
) -> RunResult:
    """The example's controllers, pointed at its hook server, run from a file or from the
    cluster under Metacontroller's CRDs."""
    controllers = [pointed_at(c, base_url) for c in example.controllers()]
    if source == "files":
        return run(backend, write_controllers(tmp_path, *controllers))
    with crds_installed(backend, THEIRS) as composites:
        decorators = eventually(  # served again once the CRD's new schema is in
            lambda: backend.admin.discover(
                "metacontroller.k8s.io/v1alpha1", "decoratorcontrollers"
            ),
            what="the DecoratorController CRD",
        )
        names = []
        for controller in controllers:
            target = composites if controller["kind"] == "CompositeController" else decorators
            created_as_stored(backend, target, controller, "spec.hooks.sync")
            names.append(controller["metadata"]["name"])
        try:
            return run(backend, controllers_from_cluster=True, only_controllers=frozenset(names))
        finally:
            for controller in controllers:
                target = composites if controller["kind"] == "CompositeController" else decorators
                backend.delete_quietly(target, controller["metadata"]["name"], None)


def ran(
    example: Example, objects: str, backend: Backend, tmp_path: Path, source: str, runs: int = 1
) -> list[RunResult]:
    """The example installed (its CRDs, then the objects of `objects`) and run `runs` times
    against its own hook server."""
    example.install_crds()
    example.apply(objects)
    with hook_server(example.directory / "manifest" / "sync.py") as url:
        return [run_example(example, backend, tmp_path / str(i), source, url) for i in range(runs)]


SOURCES = ["files", "cluster"]
PORTED = ("configmap-list-v2", "namespace-list-v2", "secretpropagation", "configmappropagation")


@pytest.mark.parametrize("source", SOURCES)
def test_configmap_list_v2(
    backend: Backend, example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads ConfigMaps of another namespace
    (examples/configmap-list-v2/test.sh)."""
    ported = example("configmap-list-v2")
    (result,) = ran(ported, "example.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    child = ported.get("v1", "configmaps", "my-config-list-list", "target-ns")
    assert child["data"]["configmaps"] == "source-ns/cm-1\nsource-ns/cm-2"
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "configmaplists", "my-config-list", "target-ns"
    )
    assert parent["status"]["count"] == 2


@pytest.mark.parametrize("source", SOURCES)
def test_namespace_list_v2(
    backend: Backend, example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads cluster-scoped Namespaces, keyed by name alone
    (examples/namespace-list-v2/test.sh)."""
    ported = example("namespace-list-v2")
    (result,) = ran(ported, "example.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    child = ported.get("v1", "configmaps", "filtered-namespaces-list", "test-ns")
    assert child["data"]["namespaces"] == "test-ns"
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "namespacelists", "filtered-namespaces", "test-ns"
    )
    assert parent["status"]["count"] >= 1


@pytest.mark.parametrize("source", SOURCES)
def test_secretpropagation(
    backend: Backend, example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A cluster-scoped parent copies a Secret into the namespaces its selector picks; its
    CRD's status schema has no observedGeneration, which must not make a loop
    (examples/secretpropagation/test.sh)."""
    ported = example("secretpropagation")
    result, again = ran(ported, "example-secret.yaml", backend, tmp_path, source, runs=2)
    assert result.errors == [] and result.converged and not result.not_converging
    assert again.errors == [] and again.actions_by_kind() == {}, again.actions_by_kind()
    for namespace in ("alpha", "beta"):
        assert ported.get("v1", "secrets", "shareable", namespace)["data"]["some"] == "dmFsdWUK"
    with pytest.raises(NotFound):
        ported.get("v1", "secrets", "shareable", "gamma")
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "secretpropagations", "secret-propagation"
    )
    assert parent["status"]["working"] == "fine"


@pytest.mark.parametrize("source", SOURCES)
def test_configmappropagation(
    backend: Backend, example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A ConfigMap copied to the namespaces a parent names, `actual_copies` counted; a parent
    the controller's labelSelector does not select is left alone
    (examples/configmappropagation/test.sh)."""
    ported = example("configmappropagation")
    (result,) = ran(ported, "example-configmap.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    for namespace in ("one", "two", "three"):
        assert ported.get("v1", "configmaps", "settings", namespace)
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "configmappropagations", "settings-propagation"
    )
    assert parent["status"]["actual_copies"] == 3
    with pytest.raises(NotFound):  # the unmanaged parent's namespaces
        ported.get("v1", "configmaps", "settings", "four")


def test_the_ported_examples_are_metacontrollers_files_unchanged() -> None:
    """Nothing of an example is edited for the port: its controller still names the Service
    of its own Deployment (pointed at loopback only when the test runs it)."""
    for name in PORTED:
        ported = Example(name, backend=None)  # type: ignore[arg-type]
        urls = [
            hook["webhook"]["url"]
            for controller in ported.controllers()
            for hook in controller["spec"]["hooks"].values()
        ]
        assert urls and all(".metacontroller/" in u for u in urls), urls
        manifests = list((ported.directory / "manifest").glob("*.yaml"))
        kinds = {d["kind"] for m in manifests for d in yaml.safe_load_all(m.read_text()) if d}
        assert {"Deployment", "Service"} <= kinds
