"""The field diff of an action (reconcile.report.diff): noise, paths, lists, text, patches."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.report.diff import (
    Change,
    ChangeOp,
    action_diff,
    diff_lines,
    diff_values,
    dotted_path,
    strip_noise,
)

LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration"
DEPLOYMENTS = ResourceInfo("apps", "v1", "deployments", "Deployment", True)
SECRETS = ResourceInfo("", "v1", "secrets", "Secret", True)


def deployment(**spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "u-1",
            "resourceVersion": "7",
            "generation": 3,
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "managedFields": [{"manager": "kubectl"}],
            "labels": {"app.kubernetes.io/name": "web"},
            "annotations": {LAST_APPLIED: "{}", "team": "a"},
        },
        "spec": {"replicas": 2, **spec},
    }


def update(before: Obj, after: Obj, resource: ResourceInfo = DEPLOYMENTS) -> Action:
    return Action(ActionKind.UPDATE, resource, before, after, "differs from desired")


def test_strip_noise_keeps_intent() -> None:
    stripped = strip_noise(deployment())
    assert stripped["metadata"] == {
        "name": "web",
        "namespace": "default",
        "labels": {"app.kubernetes.io/name": "web"},
        "annotations": {"team": "a"},
    }
    only_last_applied = deployment()
    only_last_applied["metadata"]["annotations"] = {LAST_APPLIED: "{}"}
    assert strip_noise(only_last_applied)["metadata"]["annotations"] == {}
    assert only_last_applied["metadata"]["annotations"] == {LAST_APPLIED: "{}"}  # untouched


def test_annotations_emptied_by_stripping_vanish_unless_the_other_side_has_some() -> None:
    only_last_applied = deployment()
    only_last_applied["metadata"]["annotations"] = {LAST_APPLIED: "{}"}
    create = Action(ActionKind.CREATE, DEPLOYMENTS, None, only_last_applied, "missing")
    after = action_diff(create).after
    assert after is not None and "annotations" not in after["metadata"]
    with_team = deployment()
    action = update(with_team, only_last_applied)
    assert action_diff(action).changes == [
        Change(("metadata", "annotations", "team"), ChangeOp.REMOVE, before="a")
    ]


def test_noise_only_update_has_no_changes() -> None:
    before = deployment()
    after = copy.deepcopy(before)
    after["metadata"]["resourceVersion"] = "8"
    after["metadata"]["generation"] = 4
    after["metadata"]["annotations"][LAST_APPLIED] = '{"spec":{}}'
    diff = action_diff(update(before, after))
    assert diff.changes == []
    assert diff.patch == []
    assert diff_lines(update(before, after), diff) == [(" ", "(no field changes)")]


def test_paths_quote_keys_that_are_not_identifiers() -> None:
    assert dotted_path(("spec", "replicas")) == "spec.replicas"
    assert dotted_path(("spec", "containers", 0, "image")) == "spec.containers[0].image"
    assert (
        dotted_path(("metadata", "labels", "app.kubernetes.io/name"))
        == 'metadata.labels["app.kubernetes.io/name"]'
    )
    assert dotted_path((0,)) == "[0]"


def test_lists_diff_by_index() -> None:
    assert diff_values({"a": [1, 2, 3]}, {"a": [1, 5]}) == [
        Change(("a", 1), ChangeOp.CHANGE, 2, 5),
        Change(("a", 2), ChangeOp.REMOVE, before=3),
    ]
    assert diff_values([], [{"x": 1}]) == [Change((0,), ChangeOp.ADD, after={"x": 1})]


def test_json_equality() -> None:
    assert json_equal(2, 2.0)
    assert not json_equal(True, 1)
    assert not json_equal("2", 2)
    assert json_equal({"a": [1]}, {"a": [1]})
    assert diff_values({"a": True}, {"a": 1}) == [Change(("a",), ChangeOp.CHANGE, True, 1)]


def test_update_lines_and_patch() -> None:
    before = deployment(template={"spec": {"containers": [{"name": "web", "image": "nginx:1"}]}})
    after = copy.deepcopy(before)
    after["spec"]["replicas"] = 3
    after["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    after["metadata"]["labels"]["tier"] = "front"
    del after["metadata"]["annotations"]["team"]
    action = update(before, after)
    diff = action_diff(action)
    assert diff_lines(action, diff) == [
        ("+", "metadata.labels.tier: front"),
        ("-", "metadata.annotations.team: a"),
        ("-", "spec.replicas: 2"),
        ("+", "spec.replicas: 3"),
        ("-", "spec.template.spec.containers[0].image: nginx:1"),
        ("+", "spec.template.spec.containers[0].image: nginx:2"),
    ]
    assert jsonpatch.apply_patch(strip_noise(before), diff.patch) == strip_noise(after)


def test_nested_values_render_as_yaml_blocks() -> None:
    before = deployment()
    after = copy.deepcopy(before)
    after["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    after["spec"]["paused"] = "true"
    action = update(before, after)
    assert diff_lines(action, action_diff(action)) == [
        ("+", "spec.selector:"),
        ("+", "  matchLabels:"),
        ("+", "    app: web"),
        ("+", "spec.paused: 'true'"),
    ]


def test_multiline_strings_diff_line_by_line() -> None:
    config = "\n".join(f"line {i}" for i in range(10)) + "\n"
    before: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"nginx.conf": config}}
    after = copy.deepcopy(before)
    after["data"]["nginx.conf"] = config.replace("line 5", "line five")
    action = update(before, after, ResourceInfo("", "v1", "configmaps", "ConfigMap", True))
    assert diff_lines(action, action_diff(action)) == [
        (" ", 'data["nginx.conf"]: |'),
        (" ", "  line 3"),
        (" ", "  line 4"),
        ("-", "  line 5"),
        ("+", "  line five"),
        (" ", "  line 6"),
        (" ", "  line 7"),
    ]


def test_create_and_delete_lines() -> None:
    obj = deployment()
    create = Action(ActionKind.CREATE, DEPLOYMENTS, None, obj, "desired, missing")
    lines = diff_lines(create, action_diff(create))
    assert lines[:3] == [
        ("+", "apiVersion: apps/v1"),
        ("+", "kind: Deployment"),
        ("+", "metadata:"),
    ]
    assert all(sign == "+" for sign, _ in lines)
    assert not any("resourceVersion" in text or "uid" in text for _, text in lines)
    delete = Action(ActionKind.DELETE, DEPLOYMENTS, obj, None, "gone")
    diff = action_diff(delete)
    assert diff_lines(delete, diff) == [("-", "deleted")]
    assert (diff.changes, diff.patch, diff.after) == ([], [], None)


def test_secret_by_resource_even_without_kind() -> None:
    before: Obj = {"metadata": {"name": "s"}, "data": {"k": "b2xk"}}
    after: Obj = {"metadata": {"name": "s"}, "data": {"k": "bmV3"}}
    diff = action_diff(update(before, after, SECRETS))
    assert diff.changes == [
        Change(("data", "k"), ChangeOp.CHANGE, "<redacted>", "<redacted (changed)>")
    ]
    assert diff.patch == [{"op": "replace", "path": "/data/k", "value": "<redacted (changed)>"}]


def test_renamed_secret_keys_are_not_a_move() -> None:
    before: Obj = {"apiVersion": "v1", "kind": "Secret", "data": {"a": "eA=="}}
    after: Obj = {"apiVersion": "v1", "kind": "Secret", "data": {"b": "eQ=="}}
    patch = action_diff(update(before, after, SECRETS)).patch
    assert sorted(op["op"] for op in patch) == ["add", "remove"]


@pytest.mark.parametrize(
    "after",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}},
        {"a/b": 1, "c~d": [1, {"e": None}], "~/": {"/": "~"}, "": "", "z": True},
        {},
    ],
)
def test_a_creates_patch_is_what_jsonpatch_makes(after: dict[str, Any]) -> None:
    create = Action(ActionKind.CREATE, DEPLOYMENTS, None, after, "create")
    patch = action_diff(create).patch
    created = strip_noise(after)
    assert patch == [dict(op) for op in jsonpatch.make_patch({}, created).patch]
    assert jsonpatch.apply_patch({}, patch) == created
