"""Metacontroller's own examples (tests/data/metacontroller/examples, vendored unchanged) run
with `reconcile` in place of Metacontroller, on both backends, with their controllers read
from their files and, under Metacontroller's own CRDs, from the cluster. Each hook server is
the example's `sync.py`, unchanged, on a loopback port; the checks are those of the example's
`test.sh` (which polls until they hold; a `reconcile` run ends converged, so they hold at its
end)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from reconcile.cluster import NotFound
from tests.support.backends import Backend
from tests.support.mc_examples import Example, ran

SOURCES = ["files", "cluster"]
PORTED = ("configmap-list-v2", "namespace-list-v2", "secretpropagation", "configmappropagation")


@pytest.mark.parametrize("source", SOURCES)
def test_configmap_list_v2(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads ConfigMaps of another namespace
    (examples/configmap-list-v2/test.sh)."""
    ported = mc_example("configmap-list-v2")
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
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads cluster-scoped Namespaces, keyed by name alone
    (examples/namespace-list-v2/test.sh)."""
    ported = mc_example("namespace-list-v2")
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
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A cluster-scoped parent copies a Secret into the namespaces its selector picks; its
    CRD's status schema has no observedGeneration, which must not make a loop
    (examples/secretpropagation/test.sh)."""
    ported = mc_example("secretpropagation")
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
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A ConfigMap copied to the namespaces a parent names, `actual_copies` counted; a parent
    the controller's labelSelector does not select is left alone
    (examples/configmappropagation/test.sh)."""
    ported = mc_example("configmappropagation")
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
