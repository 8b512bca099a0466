"""Fixtures the integration tests share (the backends and namespaces are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reconcile.cluster.types import ResourceInfo
from tests.support.backends import Backend
from tests.support.mc_examples import Example
from tests.support.pushgateway import pushgateway  # noqa: F401 (a fixture for every test here)
from tests.support.vault import Vault, vault_scenario


@pytest.fixture
def widgets(backend: Backend) -> ResourceInfo:
    """A namespaced parent kind with a status subresource, in a group of this test's own."""
    return backend.apply_crd("Widget")


@pytest.fixture
def cms(backend: Backend) -> ResourceInfo:
    return backend.admin.discover("v1", "configmaps")


@pytest.fixture(params=["memory", pytest.param("live", marks=pytest.mark.controlplane)])
def vault(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Vault]:
    """The Vault scenario (tests/support/vault.py) through the real command: `--local` or the
    real API server."""
    backend: Backend | None = None
    if request.param == "live":
        backend = request.getfixturevalue("live_backend")
    with vault_scenario(tmp_path, backend) as scenario:
        yield scenario


@pytest.fixture
def mc_example(backend: Backend) -> Iterator[Callable[[str], Example]]:
    """Metacontroller's examples by name, on the backend; each cleaned up after the test."""
    made: list[Example] = []

    def make(name: str) -> Example:
        made.append(Example(name, backend))
        return made[-1]

    yield make
    for item in reversed(made):
        item.cleanup()
