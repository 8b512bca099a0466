"""Fixtures shared by every tier: the real control plane, the two backends, namespaces.

The real control plane tier is never skipped unless RECONCILE_SKIP_CONTROL_PLANE=1 is set
explicitly, and never in CI (CI=true makes that variable an error).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest

from reconcile.cluster.errors import ApiError
from reconcile.cluster.kubeconfig import load_connection
from reconcile.cluster.live import LiveCluster
from reconcile.secret_values import SEEN
from tests.support.backends import Backend
from tests.support.controlplane import (
    ADMIN_USER,
    TESTED_USER,
    ControlPlane,
    ControlPlaneError,
    build,
)
from tests.support.examples import ExampleLoader, LoadedExample, load_example

SKIP_VARIABLE = "RECONCILE_SKIP_CONTROL_PLANE"


@pytest.fixture(autouse=True)
def _forget_secret_values() -> Iterator[None]:
    """The registry of Secret values seen is per process (a run is one): per test here."""
    yield
    SEEN.forget_all()


def _skip_requested() -> bool:
    return os.environ.get(SKIP_VARIABLE, "") not in ("", "0")


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    if _skip_requested():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{SKIP_VARIABLE} is set but CI never skips the control plane tier")
        pytest.skip(f"{SKIP_VARIABLE}=1: the real control plane tier is opted out")
    try:
        plane = ControlPlane(build())
        plane.start()
    except (ControlPlaneError, OSError) as exc:
        pytest.fail(f"the real control plane could not be started: {exc}", pytrace=False)
    yield plane
    plane.stop()


def _live(plane: ControlPlane, user: str) -> LiveCluster:
    connection = load_connection(str(plane.kubeconfig), context=user)
    return LiveCluster(connection.configuration)


@pytest.fixture(params=["memory", pytest.param("live", marks=pytest.mark.controlplane)])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "memory":
        from reconcile.cluster.memory import MemoryCluster
        from reconcile.releases import TEST_CONTROL_PLANE_VERSION

        # the release of the test control plane, so both backends answer the same contract
        store = MemoryCluster(kubernetes_version=TEST_CONTROL_PLANE_VERSION)
        yield Backend("memory", cluster=store.with_own_stats(), admin=store)
        return
    plane: ControlPlane = request.getfixturevalue("control_plane")
    tested, admin = _live(plane, TESTED_USER), _live(plane, ADMIN_USER)
    yield Backend("live", cluster=tested, admin=admin, plane=plane)
    tested.close()
    admin.close()


@pytest.fixture
def live_backend(control_plane: ControlPlane) -> Iterator[Backend]:
    """The live backend alone, for tests about talking to a real API server (the CLI's
    connection handling); everything else runs on both backends through `backend`."""
    tested, admin = _live(control_plane, TESTED_USER), _live(control_plane, ADMIN_USER)
    yield Backend("live", cluster=tested, admin=admin, plane=control_plane)
    tested.close()
    admin.close()


@pytest.fixture
def example(backend: Backend) -> Iterator[ExampleLoader]:
    """`example("hello-world", "crd.yaml", "hello.yaml")` loads an example's objects, renamed
    for this test; they are deleted afterwards."""
    loaded: list[LoadedExample] = []

    def load(name: str, *files: str) -> LoadedExample:
        loaded.append(load_example(backend, name, *files))
        return loaded[-1]

    yield load
    for item in loaded:
        item.cleanup()


@pytest.fixture
def namespace(backend: Backend) -> Iterator[str]:
    """A namespace of the test's own. The memory backend's is deleted afterwards; the real
    control plane's is left to be discarded with it at the session's end. Deleting one makes
    the namespace controller LIST and DELETE every namespaced type in it (over a hundred, with
    the suite's CRDs): measured, 93 % of the API server's requests in a suite went to that."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    namespaces = backend.admin.discover("v1", "namespaces")
    backend.admin.create(
        namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    yield name
    if backend.plane is None:
        with contextlib.suppress(ApiError):
            backend.admin.delete(namespaces, name)
