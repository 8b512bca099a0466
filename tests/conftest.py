"""Fixtures shared by every tier: the real control planes, the two backends, namespaces.

The real control plane tier is never skipped unless RECONCILE_SKIP_CONTROL_PLANE=1 is set
explicitly, and never in CI (CI=true makes that variable an error).

Releases: every test on the real API server runs on the current release (1.37). A test that
holds where the oldest supported release (1.20) behaves differently says so with
`@pytest.mark.releases("1.37", "1.20", why="...")`; it then runs on each release named, on both
backends (the in-process cluster behaving as the same release). `RECONCILE_TEST_RELEASES=1.20`
(a comma-separated list) runs only the cases of those releases.
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
    CURRENT_RELEASE,
    RELEASES,
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


class ControlPlanes:
    """The session's control planes, started on first use: a test process that meets no 1.20
    test starts no 1.20 server."""

    def __init__(self) -> None:
        self.started: dict[str, ControlPlane] = {}

    def get(self, release: str) -> ControlPlane:
        if release not in self.started:
            try:
                plane = ControlPlane(build(release), release)
                plane.start()
            except (ControlPlaneError, OSError) as exc:
                pytest.fail(
                    f"the real control plane ({release}) could not be started: {exc}",
                    pytrace=False,
                )
            self.started[release] = plane
        return self.started[release]

    def stop(self) -> None:
        for plane in self.started.values():
            plane.stop()


@pytest.fixture(scope="session")
def control_planes() -> Iterator[ControlPlanes]:
    if _skip_requested():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{SKIP_VARIABLE} is set but CI never skips the control plane tier")
        pytest.skip(f"{SKIP_VARIABLE}=1: the real control plane tier is opted out")
    planes = ControlPlanes()
    yield planes
    planes.stop()


@pytest.fixture
def kube_release(request: pytest.FixtureRequest) -> str:
    """The Kubernetes release this case runs on (see the module docstring)."""
    return str(getattr(request, "param", CURRENT_RELEASE))


@pytest.fixture
def control_plane(control_planes: ControlPlanes, kube_release: str) -> ControlPlane:
    return control_planes.get(kube_release)


def _test_releases(definition: pytest.Function) -> tuple[str, ...]:
    marker = definition.get_closest_marker("releases")
    if marker is None:
        return (CURRENT_RELEASE,)
    unknown = [r for r in marker.args if r not in RELEASES]
    if unknown or not marker.args or not marker.kwargs.get("why"):
        raise pytest.UsageError(
            f"{definition.nodeid}: @pytest.mark.releases takes releases of {RELEASES} and why="
        )
    return tuple(marker.args)


def _selected_releases() -> tuple[str, ...]:
    wanted = os.environ.get("RECONCILE_TEST_RELEASES", "")
    return tuple(r.strip() for r in wanted.split(",") if r.strip()) or RELEASES


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Backends and releases as parameters: `[memory]` and `[live]` on the current release;
    `[memory-1.20]`, `[live-1.20]`... where a test names its releases."""
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize(
            "backend",
            ["memory", pytest.param("live", marks=pytest.mark.controlplane)],
            indirect=True,
        )
    releases = _test_releases(metafunc.definition)
    if releases != (CURRENT_RELEASE,) and "kube_release" in metafunc.fixturenames:
        metafunc.parametrize("kube_release", releases, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `long` first (whatever their tier), so none of them starts last and keeps
    one process busy after the others are done; RECONCILE_TEST_RELEASES=1.20 keeps only the
    cases of the releases it names."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    selected = _selected_releases()
    if selected == RELEASES:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if "kube_release" not in getattr(item, "fixturenames", ()):
            kept.append(item)
            continue
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec else {}
        (kept if params.get("kube_release", CURRENT_RELEASE) in selected else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _live(plane: ControlPlane, user: str) -> LiveCluster:
    connection = load_connection(str(plane.kubeconfig), context=user)
    return LiveCluster(connection.configuration)


@pytest.fixture
def backend(request: pytest.FixtureRequest, kube_release: str) -> Iterator[Backend]:
    if request.param == "memory":
        from reconcile.cluster.memory import MemoryCluster

        # the release of the control plane, so both backends answer the same contract
        store = MemoryCluster(kubernetes_version=kube_release)
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
