"""A parent CRD whose status schema does not list `observedGeneration` (Metacontroller's
secretpropagation and globalconfigmap examples): the API server drops the field reconcile adds.
That never causes a write after the first, a loop report or a failed run; the report says once
that the schema drops it. On both backends."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.results import RunResult
from tests.support.backends import Backend, crd_manifest
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.hookserver import serve
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="how a parent's status schema prunes what reconcile writes, on the oldest and today's",
)


@pytest.fixture
def strict_status(backend: Backend) -> ResourceInfo:
    """A namespaced CRD with a status subresource whose schema lists only `working`."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = crd_manifest(group, "Propagation", "propagations")
    version = crd["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "status": {"type": "object", "properties": {"working": {"type": "string"}}},
        },
    }
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    backend.admin.create(crds, crd)
    return eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "propagations"), what="the CRD served"
    )


def parent(resource: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def converged_twice(
    backend: Backend,
    namespace: str,
    strict_status: ResourceInfo,
    tmp_path: Path,
    status: dict[str, Any] | None,
) -> tuple[RunResult, dict[str, Any]]:
    """A parent whose hook answers `status`, run twice: the first run converges without a
    loop report, the second sends nothing. The first run and the status stored."""
    backend.admin.create(strict_status, parent(strict_status, "p", namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"status": copy.deepcopy(status), "children": []}

    with serve(sync) as hook:
        controller = composite(
            "propagation",
            strict_status,
            [("v1", "configmaps", "InPlace")],
            {"sync": webhook(hook.url)},
        )
        path = write_controllers(tmp_path, controller)
        first = run(backend, path)
        assert first.errors == [] and first.converged and not first.not_converging, first.errors
        stored = backend.admin.get(strict_status, "p", namespace=namespace).get("status") or {}
        mark = backend.mark()
        again = run(backend, path)
        assert again.errors == [] and again.converged and not again.not_converging
        assert backend.mutations_since(mark) == {}  # a converged run sends no writes
    return first, stored


@pytest.mark.parametrize("status", [{"working": "fine"}, None], ids=["hook-status", "no-status"])
def test_a_dropped_observed_generation_is_neither_rewritten_nor_a_loop(
    backend: Backend,
    namespace: str,
    strict_status: ResourceInfo,
    tmp_path: Path,
    status: dict[str, Any] | None,
) -> None:
    first, stored = converged_twice(backend, namespace, strict_status, tmp_path, status)
    note = [w for w in first.warnings if "observedGeneration" in w]
    assert len(note) == 1 and strict_status.group_resource in note[0], first.warnings
    assert "observedGeneration" not in stored


@pytest.mark.parametrize(
    ("status", "dropped"),
    [
        ({"working": "fine", "replicas": 0}, ["status.replicas"]),
        (
            {"working": "fine", "active": {"replicas": 1, "terminatingReplicas": 0}},
            ["status.active"],
        ),
        ({"conditions": [{"type": "Ready", "status": "True"}]}, ["status.conditions"]),
    ],
    ids=["a-field", "an-object", "a-list"],
)
def test_status_fields_the_schema_has_no_place_for_are_named_and_not_sent_again(
    backend: Backend,
    namespace: str,
    strict_status: ResourceInfo,
    tmp_path: Path,
    status: dict[str, Any],
    dropped: list[str],
) -> None:
    """A hook's status with fields the parent's schema prunes (a ReplicaSet's status copied
    into a parent whose schema predates a field): converged after one write, the fields named
    once in the warnings, and no write on the next run."""
    first, stored = converged_twice(backend, namespace, strict_status, tmp_path, status)
    notes = [w for w in first.warnings if "has no place for" in w]
    assert len(notes) == 1 and all(field in notes[0] for field in dropped), first.warnings
    assert "propagation" in notes[0] and strict_status.group_resource in notes[0]
    assert stored.get("working") == status.get("working")


def test_a_map_controllers_aggregated_status_the_schema_has_no_place_for_is_named(
    backend: Backend, namespace: str, strict_status: ResourceInfo, tmp_path: Path
) -> None:
    """A MapController's own aggregated status (`status.<plural>.total`), on a parent whose
    schema lists none of it: named once in the warnings, nothing sent on the next run."""
    services = backend.admin.discover("v1", "services")
    backend.admin.create(
        services,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "p"}},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
    )
    mapper = parent(strict_status, "p", namespace)
    mapper["spec"]["selector"] = {"matchLabels": {"app": "p"}}
    backend.admin.create(strict_status, mapper)

    def one_configmap(request: dict[str, Any]) -> dict[str, Any]:
        name = request["input"]["metadata"]["name"]
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-map"}}
        return {"outputs": [cm]}

    with serve(one_configmap) as hook:
        controller = {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "MapController",
            "metadata": {"name": "mapped"},
            "spec": {
                "parentResource": {
                    "apiVersion": strict_status.api_version,
                    "resource": strict_status.resource,
                },
                "inputResources": [{"apiVersion": "v1", "resource": "services"}],
                "outputResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "updateStrategy": {"method": "InPlace"},
                    }
                ],
                "hooks": {"map": webhook(hook.url)},
            },
        }
        path = write_controllers(tmp_path, controller)
        first = run(backend, path)
        assert first.errors == [] and first.converged and not first.not_converging, first.errors
        notes = [w for w in first.warnings if "has no place for" in w]
        assert len(notes) == 1 and "mapped" in notes[0], first.warnings
        assert "status.services" in notes[0] and "status.configmaps" in notes[0]
        mark = backend.mark()
        again = run(backend, path)
        assert again.errors == [] and again.converged and not again.not_converging
        assert backend.mutations_since(mark) == {}


BUILTIN_PARENTS = {
    "deployments": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    },
    "services": {
        "apiVersion": "v1",
        "kind": "Service",
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    },
}


@pytest.mark.parametrize("plural", sorted(BUILTIN_PARENTS))
def test_a_builtin_parent_keeps_its_own_status_and_converges(
    backend: Backend, namespace: str, tmp_path: Path, plural: str
) -> None:
    """A built-in kind as parent, whose hook returns a status of its own (`ready`): the kind's
    status has no place for it, so it is named once and never sent; the kind's own status
    fields stay as the server and its controllers keep them; the second run sends nothing."""
    body = {**BUILTIN_PARENTS[plural], "metadata": {"name": "web", "namespace": namespace}}
    resource = backend.admin.discover(str(body["apiVersion"]), plural)
    backend.admin.create(resource, body)

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"status": {"ready": True}, "children": []}

    with serve(sync) as hook:
        controller = composite(
            "web", resource, [("v1", "configmaps", "InPlace")], {"sync": webhook(hook.url)}
        )
        # a Service's spec.selector is no label selector: Metacontroller's generateSelector
        controller["spec"]["generateSelector"] = True
        path = write_controllers(tmp_path, controller)
        first = run(backend, path)
        assert first.errors == [] and first.converged and not first.not_converging, first.errors
        notes = [w for w in first.warnings if "status.ready" in w]
        assert len(notes) == 1 and resource.group_resource in notes[0], first.warnings
        stored = backend.admin.get(resource, "web", namespace=namespace).get("status") or {}
        assert "ready" not in stored
        mark = backend.mark()
        again = run(backend, path)
        assert again.errors == [] and again.converged and not again.not_converging
        assert backend.mutations_since(mark) == {}


def preserving_status(backend: Backend, *, v1beta1: bool) -> ResourceInfo:
    """A CRD whose status keeps whatever it is given: made as `v1beta1` (it reads back with
    `preserveUnknownFields: true`), or as v1 with `x-kubernetes-preserve-unknown-fields`."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = crd_manifest(group, "Propagation", "propagations")
    if v1beta1:
        crd["apiVersion"] = "apiextensions.k8s.io/v1beta1"
        version = crd["spec"].pop("versions")[0]
        crd["spec"].update(version=version["name"], subresources={"status": {}})
        crds = backend.admin.discover("apiextensions.k8s.io/v1beta1", "customresourcedefinitions")
    else:
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
        crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    backend.admin.create(crds, crd)
    return eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "propagations"), what="the CRD served"
    )


def test_a_status_that_keeps_unknown_fields_gets_observed_generation(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """Metacontroller always writes `observedGeneration`; where the server keeps it (a status
    preserving unknown fields) so do we, with no warning."""
    resource = preserving_status(backend, v1beta1=False)
    first, stored = converged_twice(backend, namespace, resource, tmp_path, {"working": "yes"})
    assert stored == {"working": "yes", "observedGeneration": 1}
    assert not [w for w in first.warnings if "observedGeneration" in w], first.warnings


@pytest.mark.releases(OLDEST_RELEASE, why="apiextensions.k8s.io/v1beta1 is served up to 1.21")
def test_a_crd_made_as_v1beta1_keeps_observed_generation(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """A parent CRD made as v1beta1 reads back with `preserveUnknownFields: true`: the server
    keeps every status field, `observedGeneration` included, and it is written."""
    resource = preserving_status(backend, v1beta1=True)
    first, stored = converged_twice(backend, namespace, resource, tmp_path, {"working": "yes"})
    assert stored == {"working": "yes", "observedGeneration": 1}
    assert not [w for w in first.warnings if "observedGeneration" in w], first.warnings
