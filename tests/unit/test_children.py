"""The children diff every controller kind shares (reconcile.engine.children), with plain dicts:
phase order, update methods, what blocks a create, adoption, and the kinds that call it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile.engine.actions import RECREATE_REASON, ActionKind
from reconcile.engine.apply import prepare_desired
from reconcile.engine.children import (
    QUIET,
    Blocked,
    ChildrenDiff,
    OwnedType,
    diff_children,
    problem,
    wait,
)
from reconcile.engine.decorator.plan import TargetContext, plan_target
from reconcile.engine.decorator.response import DecoratorResponse
from reconcile.engine.finalizers import Mode
from reconcile.engine.responses import PlanError
from reconcile.engine.writes import CLIENT_SIDE
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.controller import OwnedRule, UpdateMethod
from reconcile.specs.decorator import DecoratorController, parse_decorator_controller

CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
DEPLOYMENTS = ResourceInfo("apps", "v1", "deployments", "Deployment", namespaced=True)


def configmap(name: str, data: dict[str, str], *, deleting: bool = False) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def desired(name: str, data: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


def owned(method: UpdateMethod) -> OwnedType[OwnedRule]:
    return OwnedType(OwnedRule("v1", "configmaps", method), CONFIGMAPS)


def run_diff(
    method: UpdateMethod,
    observed: dict[str, Obj],
    wanted: dict[str, Obj],
    **options: Any,
) -> ChildrenDiff:
    into = ChildrenDiff()
    diff_children(
        owned(method), observed, wanted, into, strategy=CLIENT_SIDE, stale_reason="stale", **options
    )
    return into


def test_phases_come_in_execution_order_whatever_the_input_order() -> None:
    observed = {"b": configmap("b", {"x": "1"}), "c": configmap("c", {})}
    diff = run_diff(
        UpdateMethod.IN_PLACE,
        observed,
        {"a": desired("a", {}), "b": desired("b", {"x": "2"})},  # c is stale
    )
    assert [(a.kind, a.name) for a in diff.actions] == [
        (ActionKind.DELETE, "c"),
        (ActionKind.CREATE, "a"),
        (ActionKind.UPDATE, "b"),
    ]
    assert diff.actions[0].reason == "stale"


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        (UpdateMethod.IN_PLACE, [(ActionKind.UPDATE, "differs from desired")]),
        (UpdateMethod.RECREATE, [(ActionKind.DELETE, RECREATE_REASON)]),
        (UpdateMethod.ON_DELETE, []),
        (UpdateMethod.ROLLING_IN_PLACE, []),  # left to the rollout
        (UpdateMethod.ROLLING_RECREATE, []),
    ],
)
def test_a_changed_object_is_updated_by_its_method(
    method: UpdateMethod, expected: list[tuple[ActionKind, str]]
) -> None:
    diff = run_diff(method, {"b": configmap("b", {"x": "1"})}, {"b": desired("b", {"x": "2"})})
    assert [(a.kind, a.reason) for a in diff.actions] == expected


def test_an_object_being_deleted_is_neither_deleted_again_nor_updated_but_waited_for() -> None:
    observed = {
        "b": configmap("b", {"x": "1"}, deleting=True),
        "c": configmap("c", {}, deleting=True),
    }
    diff = run_diff(UpdateMethod.IN_PLACE, observed, {"b": desired("b", {"x": "2"})})
    assert diff.actions == []
    assert diff.waits == ["ConfigMap default/b is being deleted before it is created again"]


@pytest.mark.parametrize(
    ("blocked", "waits", "problems"),
    [
        (wait("w"), ["w"], []),
        (problem("p"), [], ["p"]),
        (QUIET, [], []),
    ],
)
def test_what_stands_in_the_way_of_a_create_is_a_wait_a_problem_or_nothing(
    blocked: Blocked, waits: list[str], problems: list[str]
) -> None:
    diff = run_diff(UpdateMethod.IN_PLACE, {}, {"a": desired("a", {})}, occupant=lambda _: blocked)
    assert (diff.actions, diff.waits, diff.problems) == ([], waits, problems)


def test_an_adopted_orphan_is_adopted_or_updated_and_shown_as_it_was() -> None:
    wanted = {**desired("a", {"x": "1"}), "metadata": {"name": "a", "namespace": "default"}}
    wanted["metadata"]["ownerReferences"] = [{"uid": "parent-uid", "controller": True}]
    as_adopted = prepare_desired(wanted)  # applied once by a parent, then orphaned
    as_adopted["metadata"]["uid"] = "uid-a"
    orphan = copy.deepcopy(as_adopted)
    del orphan["metadata"]["ownerReferences"]
    same = run_diff(
        UpdateMethod.IN_PLACE,
        {"a": as_adopted},
        {"a": wanted},
        adopted={"a": orphan},
    )
    assert [(a.kind, a.before) for a in same.actions] == [(ActionKind.ADOPT, orphan)]
    changed = run_diff(
        UpdateMethod.IN_PLACE,
        {"a": as_adopted},
        {"a": {**wanted, "data": {"x": "2"}}},
        adopted={"a": orphan},
    )
    assert [(a.kind, a.reason, a.before) for a in changed.actions] == [
        (ActionKind.UPDATE, "adopted and differs from desired", orphan)
    ]


def test_every_action_carries_the_group() -> None:
    diff = run_diff(
        UpdateMethod.RECREATE,
        {"b": configmap("b", {"x": "1"}), "c": configmap("c", {})},
        {"a": desired("a", {}), "b": desired("b", {"x": "2"})},
        group="Thing default/in",
    )
    assert {a.group for a in diff.actions} == {"Thing default/in"}


# -- the decorator now orders its attachments as the other kinds do ---------------------------

TARGET: Obj = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "uid": "target-uid"},
}


def decorator() -> DecoratorController:
    return parse_decorator_controller(
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "DecoratorController",
            "metadata": {"name": "tag"},
            "spec": {
                "resources": [{"apiVersion": "apps/v1", "resource": "deployments"}],
                "attachments": [
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "updateStrategy": {"method": "InPlace"},
                    }
                ],
                "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}},
            },
        }
    )


def attachment(name: str, data: dict[str, str]) -> Obj:
    obj = configmap(name, data)
    obj["metadata"]["annotations"] = {"metacontroller.k8s.io/decorator-controller": "tag"}
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "target-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return obj


def plan_for(
    controller: DecoratorController, target: Obj, observed: dict[str, list[Obj]], response: Any
) -> list[Any]:
    types = (OwnedType(controller.attachments[0], CONFIGMAPS),)
    ctx = TargetContext(controller, target, DEPLOYMENTS, types)
    return plan_target(ctx, observed, response, Mode.SYNC).actions


def test_decorator_deletes_then_creates_then_updates() -> None:
    observed = {CONFIGMAPS.key: [attachment("b", {"x": "1"}), attachment("c", {})]}
    response = DecoratorResponse(attachments=[desired("b", {"x": "2"}), desired("a", {})])
    actions = plan_for(decorator(), TARGET, observed, response)
    assert [(a.kind, a.name) for a in actions] == [
        (ActionKind.DELETE, "c"),
        (ActionKind.CREATE, "a"),
        (ActionKind.UPDATE, "b"),
    ]


def test_decorator_refuses_an_attachment_listed_twice() -> None:
    response = DecoratorResponse(attachments=[desired("a", {}), desired("a", {"x": "1"})])
    with pytest.raises(
        PlanError, match=r"attachments\[1\] \(ConfigMap a\): ConfigMap default/a is listed twice"
    ):
        plan_for(decorator(), TARGET, {}, response)


def test_a_target_whose_finalizer_is_gone_gets_no_attachments_again() -> None:
    held = {**TARGET, "metadata": {**TARGET["metadata"], "finalizers": ["example.com/hold"]}}
    held["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    response = DecoratorResponse(attachments=[desired("a", {})])
    actions = plan_for(decorator(), held, {}, response)
    assert [a for a in actions if a.kind is ActionKind.CREATE] == []
