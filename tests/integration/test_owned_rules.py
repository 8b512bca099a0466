"""The rules for what a controller owns, tried on all three kinds on both backends.

A resource the controller names that the server does not have is reported with the field that
names it. A desired object (a child, an attachment, an output) over the API server's limits, or
whose ownerReference names another controller, is refused in the same words whatever the kind,
before anything is sent for it. A DecoratorController without a finalize hook takes its
finalizer off a target (Metacontroller's finalizer manager), so a target being deleted is not
held by it forever."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.objects.meta import metadata
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve

KINDS = ("composite", "decorator", "map")
# where each kind's hook answer lists what it wants owned
ANSWER_FIELD = {"composite": "children", "decorator": "attachments", "map": "outputs"}
KIND_NAMES = {
    "composite": "CompositeController",
    "decorator": "DecoratorController",
    "map": "MapController",
}
NOWHERE = webhook("http://127.0.0.1:9/")  # never called: the controller stops before


@pytest.fixture
def gadgets(backend: Backend) -> ResourceInfo:
    return backend.apply_crd("Gadget")


def controller(kind: str, parent: ResourceInfo, owned: str, hooks: dict[str, Any]) -> Any:
    """A controller of `kind` over Gadgets, owning objects of `owned` (`v1/configmaps`), with
    Services as a map's inputs."""
    api_version, resource = owned.rsplit("/", 1)
    rule = {"apiVersion": api_version, "resource": resource}
    parent_rule = {"apiVersion": parent.api_version, "resource": parent.resource}
    if kind == "composite":
        return composite(
            "owner", parent, [(api_version, resource, "InPlace")], hooks, generateSelector=True
        )
    if kind == "decorator":
        spec = {"resources": [parent_rule], "attachments": [rule], "hooks": hooks}
    else:
        spec = {
            "parentResource": parent_rule,
            "inputResources": [{"apiVersion": "v1", "resource": "services"}],
            "outputResources": [rule],
            "hooks": {"map": hooks["sync"]},
        }
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController" if kind == "decorator" else "MapController",
        "metadata": {"name": "owner"},
        "spec": spec,
    }


def gadget(resource: ResourceInfo, name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {},
    }


@pytest.mark.parametrize(
    ("kind", "unknown", "field"),
    [
        ("composite", "child", "spec.childResources[0]"),
        ("decorator", "child", "spec.attachments[0]"),
        ("decorator", "parent", "spec.resources[0]"),
        ("map", "child", "spec.outputResources[0]"),
        ("map", "parent", "spec.parentResource"),
    ],
)
def test_an_unknown_resource_is_reported_with_its_field(
    backend: Backend,
    gadgets: ResourceInfo,
    tmp_path: Path,
    kind: str,
    unknown: str,
    field: str,
) -> None:
    missing = ResourceInfo(gadgets.group, "v1", "nothings", "Nothing", True, has_status=True)
    parent = missing if unknown == "parent" else gadgets
    owned = f"{gadgets.group}/v1/nothings" if unknown == "child" else "v1/configmaps"
    path = write_controllers(tmp_path, controller(kind, parent, owned, {"sync": NOWHERE}))
    mark = backend.mark()
    result = run(backend, path)
    (error,) = result.errors
    assert error.startswith(f"{KIND_NAMES[kind]} owner: {field}: "), error
    assert "nothings" in error
    assert backend.mutations_since(mark) == {}


OTHER_CONTROLLER = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "rs",
    "uid": "4f9c2b1e-0000-4000-8000-000000000001",
    "controller": True,
}
WRONGS: dict[str, tuple[dict[str, Any], str]] = {
    # a client-side apply's last-applied copy would put its annotations over the 256 KiB limit
    "oversized": (
        {"data": {"big": "x" * 300_000}},
        "KiB as JSON: its last-applied annotation (a copy of it) would be over the API server's "
        "256 KiB limit on annotations; keep large data out of the child",
    ),
    "controlled by another": (
        {"metadata": {"ownerReferences": [OTHER_CONTROLLER]}},
        "metadata.ownerReferences names another controller",
    ),
}


@pytest.mark.parametrize("wrong", list(WRONGS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_desired_object_is_refused_in_the_same_words_by_every_kind(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path, kind: str, wrong: str
) -> None:
    backend.admin.create(gadgets, gadget(gadgets, "p", namespace))
    services = backend.admin.discover("v1", "services")
    backend.admin.create(
        services,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "in", "namespace": namespace},
            "spec": {"ports": [{"port": 80}]},
        },
    )
    change, words = WRONGS[wrong]
    bad: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}}
    bad["metadata"].update(change.get("metadata", {}))
    bad.update({k: v for k, v in change.items() if k != "metadata"})
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "good"}, "data": {}}
    field = ANSWER_FIELD[kind]

    def hook(request: dict[str, Any]) -> dict[str, Any]:
        return {field: [good, bad]}

    configmaps = backend.admin.discover("v1", "configmaps")
    with serve(hook) as server:
        owner = controller(kind, gadgets, "v1/configmaps", {"sync": webhook(server.url)})
        path = write_controllers(tmp_path, owner)
        result = run(backend, path)
    (error,) = result.errors
    where = f"{field}[1] (ConfigMap bad): "
    assert where in error and words in error.split(where, 1)[1], error
    # nothing of the refused answer is written: not even the good object beside it
    names = {metadata(o)["name"] for o in backend.admin.list(configmaps, namespace=namespace).items}
    assert not {"good", "bad"} & names


def test_a_decorator_without_a_finalize_hook_takes_its_finalizer_off(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    """The finalizer a decorator put on while it had a finalize hook: taken off a selected
    target (with its sync), off one no rule selects any more, and off one being deleted, which
    then goes."""
    ours = "metacontroller.io/decoratorcontroller-owner"
    selected = {"decorate": "yes"}
    for name, labels, finalizers in (
        ("kept", selected, [ours, "example.com/x"]),
        ("opted-out", {}, [ours, "example.com/x"]),
        ("deleted", selected, [ours]),
    ):
        backend.admin.create(
            gadgets, gadget(gadgets, name, namespace, labels=labels, finalizers=finalizers)
        )
    backend.admin.delete(gadgets, "deleted", namespace=namespace)
    owner = controller("decorator", gadgets, "v1/configmaps", {})
    owner["spec"]["resources"][0]["labelSelector"] = {"matchLabels": {"decorate": "yes"}}
    with serve(lambda request: {"labels": {"seen": "yes"}}) as server:
        owner["spec"]["hooks"] = {"sync": webhook(server.url)}
        result = run(backend, write_controllers(tmp_path, owner))
    assert result.errors == [] and result.converged, result.errors
    modes = {p.parent.rsplit("/", 1)[1]: p.mode for p in result.passes[0].parents()}
    assert modes == {"kept": "sync", "opted-out": "remove-finalizer", "deleted": "sync"}
    for name in ("kept", "opted-out"):
        target = backend.admin.get(gadgets, name, namespace=namespace)
        assert metadata(target)["finalizers"] == ["example.com/x"], name
        target["metadata"]["finalizers"] = []
        backend.admin.update(gadgets, target)
    kept = backend.admin.get(gadgets, "kept", namespace=namespace)
    assert metadata(kept)["labels"] == {"decorate": "yes", "seen": "yes"}
    with pytest.raises(NotFound):
        backend.admin.get(gadgets, "deleted", namespace=namespace)
