"""Dry-run writes (`Cluster.dry_run_view()`, `dryRun=All`), on the real API server and the
memory backend alike: the server checks and answers every write as it would (defaults,
schema, admission, refusals with the same status) and persists nothing."""

from __future__ import annotations

import uuid

import pytest

from reconcile.cluster import Conflict, Invalid, NotFound
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.objects.meta import metadata
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="dry runs of each kind of write, on each release --local models",
)


def configmap(name: str, namespace: str, **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data or {"key": name},
    }


@pytest.fixture
def cms(backend: Backend) -> ResourceInfo:
    return backend.cluster.discover("v1", "configmaps")


def store_version(backend: Backend) -> str | None:
    """The in-process store's resourceVersion (the live one moves with every controller's
    write, so only the memory backend can show that a dry run moved nothing)."""
    return backend.admin.resource_version if isinstance(backend.admin, MemoryCluster) else None


def dry_requests(backend: Backend, since: int) -> list[str]:
    """The requestURIs of the mutating requests the code under test sent (live only)."""
    assert backend.plane is not None
    return [
        str(e["requestURI"])
        for e in backend.plane.audit_events()[since:]
        if e["verb"] in ("create", "update", "patch", "delete")
    ]


def parts_crd(backend: Backend) -> ResourceInfo:
    """A CRD of Parts whose spec.size is at most 10, with the status subresource."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"size": {"type": "integer", "maximum": 10}},
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"parts.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "parts", "singular": "part", "kind": "Part"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
    backend.admin.create(backend.admin.discover("apiextensions.k8s.io/v1", "crds"), crd)
    return eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "parts"), what="parts to be served"
    )


def part(resource: ResourceInfo, name: str, namespace: str, size: int) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": "Part",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": size},
    }


def test_a_dry_run_create_returns_the_object_and_stores_nothing(
    backend: Backend, namespace: str, cms: ResourceInfo
) -> None:
    dry = backend.cluster.dry_run_view()
    before = store_version(backend)
    mark = backend.mark()
    answered = dry.create(cms, configmap("a", namespace))
    meta = metadata(answered)
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert "resourceVersion" not in meta  # as it would be stored: it never was
    assert (answered["apiVersion"], answered["kind"], answered["data"]) == (
        "v1",
        "ConfigMap",
        {"key": "a"},
    )
    assert [(e["manager"], e["operation"]) for e in meta["managedFields"]] == [
        ("reconcile", "Update")
    ]
    with pytest.raises(NotFound):
        backend.cluster.get(cms, "a", namespace=namespace)
    assert backend.requests_since(mark)["create"] == 1  # sent and counted like any write
    assert store_version(backend) == before


def test_dry_run_updates_applies_and_deletes_store_nothing(
    backend: Backend, namespace: str, cms: ResourceInfo
) -> None:
    stored = backend.cluster.create(cms, configmap("b", namespace))
    dry = backend.cluster.dry_run_view()
    before = store_version(backend)
    since = len(backend.plane.audit_events()) if backend.plane is not None else 0

    changed = dry.update(cms, {**stored, "data": {"key": "changed"}})
    assert changed["data"] == {"key": "changed"}
    assert metadata(changed)["resourceVersion"] == metadata(stored)["resourceVersion"]
    applied = dry.apply(
        cms, configmap("b", namespace, key="applied"), field_manager="x", force=True
    )
    assert applied["data"] == {"key": "applied"}
    new = dry.apply(cms, configmap("c", namespace), field_manager="x")
    assert "resourceVersion" not in metadata(new)
    dry.delete(cms, "b", namespace=namespace, uid=metadata(stored)["uid"])
    with pytest.raises(Conflict):  # the preconditions are checked all the same
        dry.delete(cms, "b", namespace=namespace, uid="0c1d2e3f-0000-4000-8000-000000000000")
    with pytest.raises(NotFound):
        dry.delete(cms, "missing", namespace=namespace)

    assert backend.cluster.get(cms, "b", namespace=namespace) == stored
    with pytest.raises(NotFound):
        backend.cluster.get(cms, "c", namespace=namespace)
    assert store_version(backend) == before
    if backend.plane is not None:  # the API server saw each write as a dry run
        uris = dry_requests(backend, since)
        assert len(uris) == 6
        assert all("dryRun=All" in uri for uri in uris), uris


def test_dry_runs_of_a_custom_resource_are_checked_by_its_schema(
    backend: Backend, namespace: str
) -> None:
    parts = parts_crd(backend)
    dry = backend.cluster.dry_run_view()
    with pytest.raises(Invalid) as refused:
        dry.create(parts, part(parts, "big", namespace, 11))
    assert refused.value.status == 422
    assert "spec.size" in str(refused.value) and "less than or equal to 10" in str(refused.value)
    answered = dry.create(parts, part(parts, "small", namespace, 3))
    assert metadata(answered)["generation"] == 1 and "resourceVersion" not in metadata(answered)
    with pytest.raises(NotFound):
        backend.cluster.get(parts, "small", namespace=namespace)

    stored = backend.cluster.create(parts, part(parts, "p", namespace, 1))
    before = store_version(backend)
    grown = dry.update(parts, {**stored, "spec": {"size": 2}})
    assert metadata(grown)["generation"] == 2  # as it would be stored...
    assert metadata(grown)["resourceVersion"] == metadata(stored)["resourceVersion"]
    with pytest.raises(Invalid) as too_big:
        dry.update(parts, {**stored, "spec": {"size": 40}})
    assert too_big.value.status == 422
    with_status = dry.update_status(parts, {**stored, "status": {"phase": "Ready"}})
    assert with_status["status"] == {"phase": "Ready"}
    assert backend.cluster.get(parts, "p", namespace=namespace) == stored  # ...and is not
    assert store_version(backend) == before
