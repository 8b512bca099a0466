"""What a hook wants a parent to own, completed and checked (reconcile.engine.owned), with plain
dicts: one set of rules for the three kinds, in the same words, and each kind's part of it as
data (its labels, annotations, selector, default namespace)."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.engine import owned
from reconcile.engine.children import OwnedType
from reconcile.engine.composite.sync import completion as child_completion
from reconcile.engine.decorator.plan import completion as attachment_completion
from reconcile.engine.flow import Context
from reconcile.engine.map_controller.inputs import (
    MAP_INPUT_ANNOTATION,
    MAP_KEY_LABEL,
    MapInput,
    map_key,
)
from reconcile.engine.map_controller.plan import completion as output_completion
from reconcile.engine.ownership import owner_reference
from reconcile.engine.writes import ApplyStrategy
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.controller import OwnedRule
from reconcile.specs.decorator import DECORATOR_ANNOTATION, parse_decorator_controller
from reconcile.specs.map_controller import parse_map_controller

THINGS = ResourceInfo("example.com", "v1", "things", "Thing", True, has_status=True)
CLUSTER_THINGS = ResourceInfo("example.com", "v1", "clusterthings", "ClusterThing", False)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
ROLES = ResourceInfo("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False)
HOOK = {"webhook": {"url": "http://hooks.example/"}}
OTHER_REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "x"}


def meta(name: str, spec: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


RULE = {"apiVersion": "v1", "resource": "configmaps"}
PARENT_RULE = {"apiVersion": "example.com/v1", "resource": "things"}
COMPOSITE = parse_composite_controller(
    meta(
        "c",
        {"parentResource": PARENT_RULE, "childResources": [RULE], "hooks": {"sync": HOOK}},
        "CompositeController",
    )
)
DECORATOR = parse_decorator_controller(
    meta(
        "d",
        {"resources": [PARENT_RULE], "attachments": [RULE], "hooks": {"sync": HOOK}},
        "DecoratorController",
    )
)
MAP = parse_map_controller(
    meta(
        "m",
        {
            "parentResource": PARENT_RULE,
            "inputResources": [{"apiVersion": "v1", "resource": "services"}],
            "outputResources": [RULE],
            "hooks": {"map": HOOK},
        },
        "MapController",
    )
)
SERVICE: Obj = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "in", "namespace": "inputs", "uid": "s"},
}
INPUT = MapInput(ResourceInfo("", "v1", "services", "Service", True), SERVICE, map_key(SERVICE))


def parent(namespaced: bool = True) -> Obj:
    meta: dict[str, Any] = {"name": "p", "uid": "parent-uid"}
    if namespaced:
        meta["namespace"] = "ns"
    kind = "Thing" if namespaced else "ClusterThing"
    return {"apiVersion": "example.com/v1", "kind": kind, "metadata": meta}


def context(kind: str, namespaced: bool = True, server_side: bool = False) -> Any:
    controller = {"composite": COMPOSITE, "decorator": DECORATOR, "map": MAP}[kind]
    owned_types: tuple[OwnedType[OwnedRule], ...] = (
        OwnedType(OwnedRule("v1", "configmaps"), CONFIGMAPS),
    )
    if not namespaced:
        roles = OwnedType(OwnedRule("rbac.authorization.k8s.io/v1", "clusterroles"), ROLES)
        owned_types += (roles,)
    return Context(
        controller,
        parent(namespaced),
        THINGS if namespaced else CLUSTER_THINGS,
        owned_types,
        ApplyStrategy(server_side=server_side),
    )


def completion(kind: str, ctx: Any) -> owned.Completion:
    if kind == "composite":
        return child_completion(ctx, LabelSelector.from_labels({}))
    if kind == "decorator":
        return attachment_completion(DECORATOR)
    return output_completion(ctx, INPUT)


def configmap(name: str = "c", **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}


KINDS = ["composite", "decorator", "map"]
FIELD = {"composite": "children", "decorator": "attachments", "map": "outputs"}
RULES = {"composite": "childResources", "decorator": "attachments", "map": "outputResources"}


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        (
            [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}],
            "[0] (Secret s): Secret.v1 is not one of the controller's {rules} (ConfigMap.v1)",
        ),
        (
            [configmap(namespace="other")],
            "[0] (ConfigMap c): metadata.namespace 'other' is not the parent's namespace 'ns'",
        ),
        (
            [configmap(ownerReferences=[{**OTHER_REF, "controller": True}])],
            "[0] (ConfigMap c): metadata.ownerReferences names another controller",
        ),
        (
            [{**configmap(), "data": {"big": "x" * 300_000}}],
            "[0] (ConfigMap c): is 293 KiB as JSON: its last-applied annotation (a copy of it) "
            "would be over the API server's 256 KiB limit on annotations; keep large data out "
            "of the child",
        ),
        ([configmap(), configmap()], "[1] (ConfigMap c): ConfigMap ns/c is listed twice"),
    ],
    ids=["undeclared", "namespace", "another-controller", "oversized", "twice"],
)
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_refuses_in_the_same_words(kind: str, items: list[Obj], problem: str) -> None:
    ctx = context(kind)
    desired, problems = owned.desired_objects(ctx, completion(kind, ctx), items)
    assert problems == [FIELD[kind] + problem.format(rules=RULES[kind])]
    assert sum(len(objects) for objects in desired.values()) == len(items) - 1


def test_over_3_mib_is_refused_with_server_side_apply_too() -> None:
    big = {**configmap(), "data": {"big": "x" * (3 * 1024 * 1024)}}
    for kind in KINDS:
        ctx = context(kind, server_side=True)
        fine = owned.desired_objects(ctx, completion(kind, ctx), [configmap("a")])
        assert fine[1] == []
        problems = owned.desired_objects(ctx, completion(kind, ctx), [big])[1]
        assert len(problems) == 1 and "over the API server's 3 MiB limit" in problems[0], kind


@pytest.mark.parametrize("kind", KINDS)
def test_what_every_kind_adds(kind: str) -> None:
    ctx = context(kind)
    refs = [{**OTHER_REF, "controller": False}, owner_reference(parent())]
    raw = configmap(labels={"app": "web"}, ownerReferences=refs)
    desired, problems = owned.desired_objects(ctx, completion(kind, ctx), [raw])
    assert problems == []
    ((key, obj),) = desired["ConfigMap.v1"].items()
    assert key == ("c" if kind == "composite" else "ns/c")
    assert obj["metadata"]["namespace"] == "ns"
    # the parent controls it, once; other owners stay
    assert obj["metadata"]["ownerReferences"] == [refs[0], owner_reference(parent())]
    added = {
        "composite": ({}, {}),
        "decorator": ({}, {DECORATOR_ANNOTATION: "d"}),
        "map": ({MAP_KEY_LABEL: INPUT.key}, {MAP_INPUT_ANNOTATION: "Service inputs/in"}),
    }[kind]
    assert obj["metadata"]["labels"] == {"app": "web", **added[0]}
    assert obj["metadata"].get("annotations", {}) == added[1]
    assert raw["metadata"] == configmap(labels={"app": "web"}, ownerReferences=refs)["metadata"]


@pytest.mark.parametrize("kind", KINDS)
def test_under_a_cluster_scoped_parent(kind: str) -> None:
    """A namespaced object names its namespace (a map's output defaults to its input's); a
    cluster-scoped one has none."""
    ctx = context(kind, namespaced=False)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}
    items = [
        configmap("a"),
        configmap("b", namespace="x"),
        {**role, "metadata": {"name": "r", "namespace": "x"}},
    ]
    desired, problems = owned.desired_objects(ctx, completion(kind, ctx), items)
    if kind == "map":
        assert problems == []
        assert desired["ConfigMap.v1"]["inputs/a"]["metadata"]["namespace"] == "inputs"
    else:
        where = FIELD[kind]
        assert problems == [
            f"{where}[0] (ConfigMap a): metadata.namespace is required under a cluster-scoped "
            "parent"
        ]
    assert "namespace" not in desired["ClusterRole.rbac.authorization.k8s.io/v1"]["r"]["metadata"]
    assert desired["ConfigMap.v1"]["x/b"]["metadata"]["namespace"] == "x"
