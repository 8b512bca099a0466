"""DecoratorController, pure: the spec, the response, and the plan for one target."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.engine.actions import ActionKind
from reconcile.engine.children import OwnedType
from reconcile.engine.decorator.plan import TargetContext, finalizer, plan_target
from reconcile.engine.decorator.response import parse_response
from reconcile.engine.finalizers import Mode
from reconcile.engine.responses import ResponseError
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.decorator import parse_decorator_controller
from reconcile.specs.errors import SpecError

WITH_STATUS = ResourceInfo("example.com", "v1", "gadgets", "Gadget", True, has_status=True)
WITHOUT_STATUS = ResourceInfo("example.com", "v1", "gadgets", "Gadget", True, has_status=False)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)


def spec(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resources": [
            {
                "apiVersion": "example.com/v1",
                "resource": "gadgets",
                "annotationSelector": {
                    "matchAnnotations": {"team": "blue"},
                    "matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}],
                },
            }
        ],
        "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": {"sync": {"webhook": {"url": "http://hooks/sync"}}},
    }
    body.update(overrides)
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": "d"},
        "spec": body,
    }


def target(**meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u1", "resourceVersion": "5", **meta},
        "spec": {},
    }


def test_the_spec_is_read_and_selectors_match_annotations() -> None:
    controller = parse_decorator_controller(spec())
    (rule,) = controller.resources
    assert rule.matches(target(annotations={"team": "blue"}))
    assert not rule.matches(target(annotations={"team": "blue", "skip": "x"}))
    assert not rule.matches(target(annotations={"team": "red"}))
    assert controller.finalizer == "metacontroller.io/decoratorcontroller-d"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"resources": []}, "spec.resources: is required"),
        (
            {
                "attachments": [
                    {
                        "apiVersion": "v1",
                        "resource": "pods",
                        "updateStrategy": {"method": "Rolling"},
                    }
                ]
            },
            "spec.attachments[0].updateStrategy.method: 'Rolling' is not one of",
        ),
        (
            {"attachments": [{"apiVersion": "v1", "resource": "pods"}] * 2},
            "spec.attachments[1]: pods (v1) is already listed",
        ),
        ({"hooks": {}}, "spec.hooks.sync: is required"),
    ],
)
def test_invalid_specs_name_the_field(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as refused:
        parse_decorator_controller(spec(**overrides))
    assert message in str(refused.value)


def test_invalid_responses_are_refused_whole() -> None:
    with pytest.raises(ResponseError) as refused:
        parse_response(
            {"labels": {"a": 1}, "attachments": [{"apiVersion": "v1", "kind": "ConfigMap"}]},
            "sync",
        )
    assert "labels: must be a map of strings" in str(refused.value)
    assert "attachments[0].metadata.name: is required" in str(refused.value)


def plan(
    resource: ResourceInfo, observed_target: dict[str, Any], data: dict[str, Any]
) -> list[Any]:
    controller = parse_decorator_controller(spec())
    types = (OwnedType(controller.attachments[0], CONFIGMAPS),)
    response = parse_response(data, "sync")
    ctx = TargetContext(controller, observed_target, resource, types)
    return plan_target(ctx, {CONFIGMAPS.key: []}, response, Mode.SYNC).actions


def test_labels_merge_with_null_removal_and_nothing_to_do_is_nothing() -> None:
    (update,) = plan(
        WITH_STATUS, target(labels={"a": "1", "b": "2"}), {"labels": {"b": None, "c": "3"}}
    )
    assert update.kind is ActionKind.UPDATE
    assert update.after["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert update.after["metadata"]["resourceVersion"] == "5"  # the precondition
    assert plan(WITH_STATUS, target(labels={"a": "1"}), {"labels": {"a": "1", "z": None}}) == []


def test_status_goes_through_the_subresource_when_there_is_one() -> None:
    (status,) = plan(WITH_STATUS, target(), {"status": {"ok": True}})
    assert status.kind is ActionKind.STATUS and status.after["status"] == {"ok": True}
    (update,) = plan(WITHOUT_STATUS, target(), {"status": {"ok": True}})
    assert update.kind is ActionKind.UPDATE and update.after["status"] == {"ok": True}


def test_the_target_update_says_what_it_writes() -> None:
    """The reports name what changes: the status written with the target's update too."""
    (update,) = plan(WITHOUT_STATUS, target(), {"status": {"ok": True}})
    assert update.reason == "status"
    (update,) = plan(WITHOUT_STATUS, target(), {"labels": {"a": "1"}, "status": {"ok": True}})
    assert update.reason == "labels and status"
    (update,) = plan(
        WITH_STATUS, target(labels={"a": "1"}), {"labels": {"a": None}, "annotations": {"n": "1"}}
    )
    assert update.reason == "labels and annotations"


def test_finalize_runs_on_opt_out_only_with_the_finalizer() -> None:
    controller = parse_decorator_controller(
        spec(
            hooks={
                "sync": {"webhook": {"url": "http://h/s"}},
                "finalize": {"webhook": {"url": "http://h/f"}},
            }
        )
    )
    held = target(finalizers=[controller.finalizer])
    ours = finalizer(controller)
    assert ours.mode(held, selected=False) is Mode.FINALIZE
    assert ours.mode(held, selected=True) is Mode.SYNC
    assert ours.mode(target(), selected=False) is Mode.SKIP


def test_a_target_of_two_rules_is_one_target() -> None:
    """Two rules over one resource: a target either selects is synced once per pass."""
    from reconcile.cluster.memory import MemoryCluster
    from reconcile.engine.decorator.kind import DecoratorKind
    from reconcile.hooks import HookCaller
    from reconcile.runner.controller_pass import run_pass
    from reconcile.runner.execute import Executor
    from reconcile.runner.pass_env import PassEnv
    from reconcile.runner.snapshot import Snapshot

    cluster = MemoryCluster()
    configmaps = cluster.discover("v1", "configmaps")
    cluster.create(
        configmaps,
        {"metadata": {"name": "both", "namespace": "default", "labels": {"a": "1", "b": "1"}}},
    )
    body = spec()
    body["spec"]["resources"] = [
        {"apiVersion": "v1", "resource": "configmaps", "labelSelector": {"matchLabels": {k: "1"}}}
        for k in ("a", "b")
    ]
    body["spec"]["attachments"] = []
    body["spec"]["hooks"] = {"sync": {"command": {"argv": ["true"]}}}
    controller = parse_decorator_controller(body)
    env = PassEnv(cluster, HookCaller(), Executor(cluster, dry_run=True), Snapshot(cluster))
    result = run_pass(env, DecoratorKind(controller))
    assert [p.parent for p in result.parents] == ["ConfigMap default/both"]
