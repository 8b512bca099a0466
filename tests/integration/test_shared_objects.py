"""One object under two declared resources, on both backends: a kind listed under two API
versions (a CRD's v1 and v2; ingresses under extensions/v1beta1 and networking.k8s.io/v1 on
1.20) would have each run delete under one version what the hook creates under the other. The
controller is refused naming both fields, before it writes anything, and the other controllers
go on; and a child the run created and then deletes in a later pass is left alone and
reported, never churned."""

from __future__ import annotations

import functools
import uuid
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.types import ResourceInfo
from reconcile.results import Divergence
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve
from tests.support.poll import eventually


def two_versions(backend: Backend) -> tuple[ResourceInfo, ResourceInfo]:
    """A CRD served at v1 and v2 (the same objects, read at either version)."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    backend.admin.create(
        crds,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"things.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": schema},
                    {"name": "v2", "served": True, "storage": False, "schema": schema},
                ],
            },
        },
    )
    served = [
        eventually(
            functools.partial(backend.cluster.discover, f"{group}/{version}", "things"),
            what=f"things.{group}/{version} to be served",
        )
        for version in ("v1", "v2")
    ]
    return served[0], served[1]


def parent(kind: ResourceInfo, name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"parent": name}}},
    }


def configmap(name: str, parent_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"parent": parent_name}},
        "data": {"k": "v"},
    }


def refusal(result: Any, controller: str) -> str:
    (error,) = [e for e in result.errors if e.startswith(controller)]
    return str(error)


@pytest.mark.releases(
    "1.37", "1.20", why="a CRD's versions are one set of objects on every release"
)
def test_a_crd_under_two_versions_is_refused_before_any_write_and_the_others_go_on(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    v1, v2 = two_versions(backend)
    gizmos = backend.apply_crd("Gizmo")
    backend.admin.create(widgets, parent(widgets, "w", namespace))
    backend.admin.create(gizmos, parent(gizmos, "g", namespace))
    thing = {"apiVersion": v2.api_version, "kind": "Thing", "metadata": {"name": "t"}}

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if request["parent"]["kind"] == "Widget":
            return {
                "status": {},
                "children": [{**thing, "metadata": {"name": "t", "labels": {"parent": "w"}}}],
            }
        return {"status": {}, "children": [configmap("fine", "g")]}

    def decorate(request: dict[str, Any]) -> dict[str, Any]:
        return {"attachments": [thing]}

    with serve(sync) as server, serve(decorate) as decorator_server:
        twice = composite(
            "twice",
            widgets,
            [(v1.api_version, "things", "InPlace"), (v2.api_version, "things", "InPlace")],
            {"sync": webhook(server.url)},
        )
        fine = composite(
            "fine", gizmos, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        decorator = {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "DecoratorController",
            "metadata": {"name": "attach-twice"},
            "spec": {
                "resources": [{"apiVersion": gizmos.api_version, "resource": gizmos.resource}],
                "attachments": [
                    {"apiVersion": v2.api_version, "resource": "things"},
                    {"apiVersion": v1.api_version, "resource": "thing"},
                ],
                "hooks": {"sync": webhook(decorator_server.url)},
            },
        }
        path = write_controllers(tmp_path, twice, fine, decorator)
        result = run(backend, path)
    group = v1.group
    assert refusal(result, "CompositeController twice") == (
        "CompositeController twice: spec.childResources[0] and spec.childResources[1] list the "
        f"same objects (things.{group} is served at v1 and v2: the same objects); the one the "
        "hook does not return would be deleted as the other is created, run after run. Declare "
        "the resource once, at the version the hook returns; nothing is written for this "
        "controller until then"
    )
    assert refusal(result, "DecoratorController attach-twice").startswith(
        "DecoratorController attach-twice: spec.attachments[0] and spec.attachments[1] list the "
        f"same objects (things.{group} is served at v2 and v1: the same objects)"
    )
    assert len(result.errors) == 2, result.errors
    # nothing was written for either; the other controller made its child
    assert backend.admin.list(v1, namespace=namespace).items == []
    backend.admin.get(backend.admin.discover("v1", "configmaps"), "fine", namespace=namespace)
    assert [c.name for c in result.passes[0].controllers if c.parents] == ["fine"]


INGRESS_WHY = (
    "1.20 serves ingresses as extensions/v1beta1 and networking.k8s.io/v1: the same objects"
)


@pytest.mark.releases("1.20", why=INGRESS_WHY)
def test_ingresses_under_two_groups_are_refused_before_any_write(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    """The issue's case: the user's Ingress, deleted under one group and created under the
    other run after run. Discovery says both groups store one resource (the lists would show
    the same uid): nothing is written."""
    ingresses = backend.admin.discover("networking.k8s.io/v1", "ingresses")
    backend.admin.create(widgets, parent(widgets, "w", namespace))
    ingress: dict[str, Any] = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "labels": {"parent": "w"}},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }
    mine = backend.admin.create(
        ingresses, {**ingress, "metadata": {**ingress["metadata"], "namespace": namespace}}
    )
    with serve(lambda request: {"status": {}, "children": [ingress]}) as server:
        controller = composite(
            "ingresses",
            widgets,
            [
                ("extensions/v1beta1", "ingresses", "InPlace"),
                ("networking.k8s.io/v1", "ingresses", "InPlace"),
            ],
            {"sync": webhook(server.url)},
        )
        path = write_controllers(tmp_path, controller)
        mark = backend.mark()
        result = run(backend, path)
    error = refusal(result, "CompositeController ingresses")
    assert error.startswith(
        "CompositeController ingresses: spec.childResources[0] and spec.childResources[1] "
        "list the same objects (ingresses (extensions/v1beta1) and ingresses "
        "(networking.k8s.io/v1) "
    )
    if backend.name == "live":
        assert "are stored as one resource, as discovery says: the same objects" in error
    assert len(result.passes) == 1 and result.not_converging == []
    assert backend.mutations_since(mark) == {}
    kept = backend.admin.get(ingresses, "web", namespace=namespace)
    assert kept["metadata"]["uid"] == mine["metadata"]["uid"]


def test_a_child_created_then_deleted_in_a_later_pass_is_left_alone_and_named(
    backend: Backend, namespace: str, widgets: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(widgets, parent(widgets, "w", namespace))
    calls: list[int] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        # a hook that changes its mind on every call
        calls.append(1)
        return {"status": {}, "children": [configmap("flip", "w")] if len(calls) % 2 else []}

    with serve(sync) as server:
        controller = composite(
            "flipper", widgets, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
        )
        mark = backend.mark()
        result = run(backend, write_controllers(tmp_path, controller))
    (stuck,) = result.not_converging
    assert stuck.how is Divergence.RECREATED
    (error,) = [e for e in result.errors if "does not converge" in e]
    assert error.startswith(
        f"ConfigMap {namespace}/flip does not converge: pass 1 created it and pass 2 deletes it "
        "(not in the hook's desired children), so every run would do the same. Left alone"
    )
    assert backend.mutations_since(mark)["delete"] == 0
    backend.admin.get(backend.admin.discover("v1", "configmaps"), "flip", namespace=namespace)
    held = [a for p in result.passes[-1].parents() for a in p.actions if a.held]
    assert [a.action.kind.value for a in held] == ["delete"]
