"""Hostile hook answers, generated (hypothesis): the response parsers and planners of all three
controller kinds. Whatever a hook returns, planning either refuses the whole answer (with the
field named) or plans only what the answer says: a bad answer never deletes anything.

`scripts/faults.py hooks` runs the same properties with many more cases and prints figures.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import OwnedType
from reconcile.engine.composite.sync import (
    ChildType,
    ParentContext,
    claim_children,
    parent_selector,
    plan_parent,
)
from reconcile.engine.decorator.plan import TargetContext, plan_target
from reconcile.engine.decorator.response import parse_response
from reconcile.engine.finalizers import Mode
from reconcile.engine.map_controller.inputs import (
    MapInput,
    OutputContext,
    map_key,
    outputs_by_key,
    parse_outputs,
)
from reconcile.engine.map_controller.plan import LiveKey, plan_parent_outputs
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import PlanError, ResponseError, parse_sync_response
from reconcile.hooks.errors import HookError
from reconcile.hooks.parse import parse_object
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.decorator import parse_decorator_controller
from reconcile.specs.hooks import HookSpec, WebhookSpec
from reconcile.specs.map_controller import parse_map_controller

# The suite runs a modest number of cases; `scripts/faults.py hooks` sets more.
CASES = int(os.environ.get("RECONCILE_HOSTILE_CASES", "150"))
SETTINGS = settings(
    max_examples=CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

GADGETS = ResourceInfo("example.com", "v1", "gadgets", "Gadget", True, has_status=True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
SECRETS = ResourceInfo("", "v1", "secrets", "Secret", True)
PVCS = ResourceInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True)
HOOKS = {"webhook": {"url": "http://hooks.example/"}}

PARENT: Obj = {
    "apiVersion": "example.com/v1",
    "kind": "Gadget",
    "metadata": {
        "name": "web",
        "namespace": "ns",
        "uid": "parent-uid",
        "generation": 2,
        "resourceVersion": "9",
        "labels": {"app": "web"},
        "annotations": {"team": "blue"},
    },
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}


def owned(name: str, **extra: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": "3",
            "labels": {"app": "web", **extra.pop("labels", {})},
            "ownerReferences": [owner_reference(PARENT)],
            **extra,
        },
        "data": {"k": "v"},
    }


OBSERVED = [owned("web-a"), owned("web-b")]


def valid_children() -> list[Obj]:
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": n, "labels": {"app": "web"}},
            "data": {"k": "v"},
        }
        for n in ("web-a", "web-b")
    ]


# -- what a hostile hook may answer --------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)
BAD_NAMES = st.sampled_from(
    ["", "UPPER", "a/b", "..", "a b", "-lead", "x" * 254, "under_score", "émoji", "trail-"]
)
NOT_OBJECTS = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.lists(SCALARS, max_size=2)
)


@dataclass(frozen=True)
class Mutation:
    """A known-bad change to a valid answer, and the field its error must name."""

    field: str
    apply: Callable[[dict[str, Any], str], None]  # (answer, list key)


def _set_child(
    index: int, path: tuple[str, ...], value: Any
) -> Callable[[dict[str, Any], str], None]:
    def apply(answer: dict[str, Any], key: str) -> None:
        target = answer[key][index]
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = value

    return apply


@st.composite
def mutations(draw: st.DrawFn, list_key: str) -> Mutation:
    i = draw(st.integers(0, 1))
    choice = draw(st.integers(0, 8))
    value: Any
    if choice == 0:
        value = draw(NOT_OBJECTS.filter(lambda v: v is not None and not isinstance(v, list)))
        return Mutation(list_key, lambda a, k: a.__setitem__(k, value))
    if choice == 1:
        value = draw(NOT_OBJECTS.filter(lambda v: not isinstance(v, dict)))
        return Mutation(f"{list_key}[{i}]", _replace(i, value))
    if choice == 2:
        field = draw(st.sampled_from(["apiVersion", "kind"]))
        value = draw(st.sampled_from([None, "", 5, ["v1"]]))
        return Mutation(f"{list_key}[{i}].{field}", _set_child(i, (field,), value))
    if choice == 3:
        name = draw(BAD_NAMES)
        return Mutation(f"{list_key}[{i}].metadata.name", _set_child(i, ("metadata", "name"), name))
    if choice == 4:
        return Mutation(f"{list_key}[", _duplicate(i))
    if choice == 5:
        kind = draw(st.sampled_from(["Pod", "Service", "Deployment"]))
        return Mutation(f"{list_key}[{i}]", _set_child(i, ("kind",), kind))
    if choice == 6:
        key = draw(st.sampled_from(["bad key!", "/x", "a" * 64]))
        return Mutation(
            f"{list_key}[{i}].metadata.labels", _set_child(i, ("metadata", "labels"), {key: "v"})
        )
    if choice == 7:
        value = draw(st.sampled_from(["Other_NS", "a/b", 7]))
        return Mutation(
            f"{list_key}[{i}].metadata.namespace", _set_child(i, ("metadata", "namespace"), value)
        )
    value = draw(st.sampled_from([-1, "10", float("nan"), [3], True]))
    return Mutation("resyncAfterSeconds", lambda a, k: a.__setitem__("resyncAfterSeconds", value))


def _replace(index: int, value: Any) -> Callable[[dict[str, Any], str], None]:
    def apply(answer: dict[str, Any], key: str) -> None:
        answer[key][index] = value

    return apply


def _duplicate(index: int) -> Callable[[dict[str, Any], str], None]:
    def apply(answer: dict[str, Any], key: str) -> None:
        answer[key].append(copy.deepcopy(answer[key][index]))

    return apply


def deletes(actions: list[Action]) -> set[str]:
    return {a.name for a in actions if a.kind is ActionKind.DELETE}


def returned_names(items: Any) -> set[str]:
    if not isinstance(items, list):
        return set()
    return {
        str(i.get("metadata", {}).get("name"))
        for i in items
        if isinstance(i, dict) and isinstance(i.get("metadata"), dict)
    }


# -- CompositeController -------------------------------------------------------------------

COMPOSITE = parse_composite_controller(
    {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "web"},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "gadgets"},
            "childResources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "updateStrategy": {"method": "InPlace"},
                },
                {"apiVersion": "v1", "resource": "secrets"},
            ],
            "hooks": {"sync": HOOKS},
        },
    }
)
COMPOSITE_CTX = ParentContext(
    COMPOSITE,
    PARENT,
    GADGETS,
    (ChildType(COMPOSITE.children[0], CONFIGMAPS), ChildType(COMPOSITE.children[1], SECRETS)),
)


def plan_composite(answer: Any) -> list[Action]:
    """The actions for one parent; ResponseError / PlanError when the answer is refused."""
    if not isinstance(answer, dict):
        raise ResponseError("sync", ["the response must be a JSON object"])
    response = parse_sync_response(answer)
    selector = parent_selector(COMPOSITE_CTX)
    claims = claim_children(
        COMPOSITE_CTX, selector, {CONFIGMAPS.key: copy.deepcopy(OBSERVED), SECRETS.key: []}
    )
    return plan_parent(COMPOSITE_CTX, Mode.SYNC, selector, claims, response).actions


@SETTINGS
@given(JSON)
def test_composite_any_json_is_refused_or_deletes_only_what_it_leaves_out(answer: Any) -> None:
    try:
        actions = plan_composite(answer)
    except (ResponseError, PlanError):
        return
    kept = returned_names(answer.get("children"))
    assert deletes(actions) <= {"web-a", "web-b"} - kept


@SETTINGS
@given(mutations("children"))
def test_composite_bad_answers_are_refused_whole_with_the_field_named(mutation: Mutation) -> None:
    answer: dict[str, Any] = {"children": valid_children(), "status": {"ok": True}}
    mutation.apply(answer, "children")
    try:
        plan_composite(answer)
    except (ResponseError, PlanError) as exc:
        assert mutation.field in str(exc), (mutation.field, str(exc))
        return
    raise AssertionError(f"accepted a bad answer: {json.dumps(answer, default=str)[:300]}")


@SETTINGS
@given(NOT_OBJECTS.filter(lambda v: v is not None))
def test_composite_status_must_be_an_object(status: Any) -> None:
    try:
        plan_composite({"children": valid_children(), "status": status})
    except ResponseError as exc:
        assert "status: must be an object" in str(exc)
        return
    raise AssertionError("a status that is not an object was accepted")


# -- DecoratorController -------------------------------------------------------------------

DECORATOR = parse_decorator_controller(
    {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": "deco"},
        "spec": {
            "resources": [{"apiVersion": "example.com/v1", "resource": "gadgets"}],
            "attachments": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "updateStrategy": {"method": "InPlace"},
                }
            ],
            "hooks": {"sync": HOOKS},
        },
    }
)
ATTACHED = [
    {
        **o,
        "metadata": {
            **o["metadata"],
            "annotations": {"metacontroller.k8s.io/decorator-controller": "deco"},
        },
    }
    for o in OBSERVED
]


def plan_decorator(answer: Any) -> list[Action]:
    response = parse_response(answer, "sync")
    ctx = TargetContext(
        DECORATOR, PARENT, GADGETS, (OwnedType(DECORATOR.attachments[0], CONFIGMAPS),)
    )
    observed = {CONFIGMAPS.key: copy.deepcopy(ATTACHED)}
    return plan_target(ctx, observed, response, Mode.SYNC).actions


@SETTINGS
@given(JSON)
def test_decorator_any_json_is_refused_or_deletes_only_what_it_leaves_out(answer: Any) -> None:
    try:
        actions = plan_decorator(answer)
    except (ResponseError, PlanError):
        return
    kept = returned_names(answer.get("attachments"))
    assert deletes(actions) <= {"web-a", "web-b"} - kept
    # the target itself is never deleted, whatever the labels or status say
    assert all(a.name != "web" for a in actions if a.kind is ActionKind.DELETE)


@SETTINGS
@given(mutations("attachments"))
def test_decorator_bad_answers_are_refused_whole(mutation: Mutation) -> None:
    answer: dict[str, Any] = {"attachments": valid_children(), "labels": {"x": "y"}}
    mutation.apply(answer, "attachments")
    try:
        plan_decorator(answer)
    except (ResponseError, PlanError) as exc:
        assert mutation.field.split("[")[0] in str(exc), (mutation.field, str(exc))
        return
    # a duplicate attachment is the same object twice: harmless, planned once
    assert mutation.field == "attachments[", json.dumps(answer, default=str)[:300]


# -- MapController -------------------------------------------------------------------------

MAP = parse_map_controller(
    {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": "maps"},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "gadgets"},
            "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
            "outputResources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "updateStrategy": {"method": "InPlace"},
                }
            ],
            "hooks": {"map": HOOKS},
        },
    }
)
MAP_CTX = OutputContext(MAP, PARENT, GADGETS, (OwnedType(MAP.outputs[0], CONFIGMAPS),))
PVC: Obj = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "ns", "uid": "pvc-uid", "labels": {"app": "web"}},
}
INPUT = MapInput(PVCS, PVC, map_key(PVC))


def plan_map(answer: Any) -> list[Action]:
    outputs = parse_outputs(answer, "map")
    mapped = [
        {**o, "metadata": {**o["metadata"], "labels": {"metacontroller.k8s.io/map-key": INPUT.key}}}
        for o in OBSERVED
    ]
    observed = outputs_by_key(MAP_CTX.owned, {CONFIGMAPS.key: mapped})
    plans = plan_parent_outputs(MAP_CTX, [LiveKey(INPUT, outputs)], [], observed, lambda *_: None)
    (plan,) = plans
    if plan.problems:
        raise ResponseError("map", plan.problems)
    return plan.actions


@SETTINGS
@given(JSON)
def test_map_any_json_is_refused_or_deletes_only_what_it_leaves_out(answer: Any) -> None:
    try:
        actions = plan_map(answer)
    except ResponseError:
        return
    kept = returned_names(answer.get("outputs"))
    assert deletes(actions) <= {"web-a", "web-b"} - kept


@SETTINGS
@given(mutations("outputs"))
def test_map_bad_answers_are_refused_whole(mutation: Mutation) -> None:
    answer: dict[str, Any] = {"outputs": valid_children()}
    mutation.apply(answer, "outputs")
    if mutation.field == "resyncAfterSeconds":
        return  # the map hook has no resyncAfterSeconds: an extra key is ignored
    try:
        plan_map(answer)
    except ResponseError as exc:
        assert mutation.field.split("[")[0] in str(exc), (mutation.field, str(exc))
        return
    raise AssertionError(f"accepted a bad answer: {json.dumps(answer, default=str)[:300]}")


# -- the bytes a hook sends ----------------------------------------------------------------

HOOK = HookSpec("sync", "CompositeController web", webhook=WebhookSpec("http://hooks.example/"))


@SETTINGS
@given(st.binary(max_size=200))
def test_any_bytes_are_an_object_or_a_hook_error(data: bytes) -> None:
    try:
        value = parse_object(HOOK, data, "stdout")
    except HookError as exc:
        assert exc.reason in {"bad-json", "not-an-object"}
        return
    assert isinstance(value, dict)
    text = json.dumps(value, allow_nan=False)  # what was accepted is JSON (no NaN, no Infinity)
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in json.loads(text).values())


def test_non_finite_numbers_and_non_utf8_are_refused() -> None:
    for data, problem in (
        (b'{"resyncAfterSeconds": NaN}', "NaN is not a JSON number"),
        (b'{"a": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"a": "\xff\xfe"}', "not valid JSON"),
    ):
        try:
            parse_object(HOOK, data, "stdout")
        except HookError as exc:
            assert problem in str(exc), str(exc)
        else:
            raise AssertionError(f"{data!r} was accepted")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_an_answer_is_read_in_any_encoding_json_allows(encoding: str) -> None:
    """As `json.loads` reads bytes: UTF-8 (a byte order mark or not), UTF-16 or UTF-32."""
    data = '{"status": {"note": "é ✓"}}'.encode(encoding)
    assert parse_object(HOOK, data, "stdout") == {"status": {"note": "é ✓"}}
