"""Fixtures the integration tests share (the backends and namespaces are in tests/conftest.py)."""

from __future__ import annotations

import pytest

from reconcile.cluster.types import ResourceInfo
from tests.support.backends import Backend


@pytest.fixture
def widgets(backend: Backend) -> ResourceInfo:
    """A namespaced parent kind with a status subresource, in a group of this test's own."""
    return backend.apply_crd("Widget")


@pytest.fixture
def cms(backend: Backend) -> ResourceInfo:
    return backend.admin.discover("v1", "configmaps")
