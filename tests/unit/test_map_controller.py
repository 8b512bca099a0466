"""MapController, pure: the spec, map keys, input selection, the plan per map key (creates,
update methods, deletes, detached outputs, conflicts, foreign names) and the status."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reconcile.engine.actions import ActionKind
from reconcile.engine.flow import Plan
from reconcile.engine.map_controller.inputs import (
    MAP_INPUT_ANNOTATION,
    MAP_KEY_LABEL,
    MapInput,
    OutputContext,
    OutputType,
    SelectorProblem,
    input_selector,
    map_key,
    outputs_by_key,
    parse_outputs,
    select_inputs,
)
from reconcile.engine.map_controller.plan import DetachedKey, LiveKey, plan_parent_outputs
from reconcile.engine.map_controller.status import aggregated_status, outputs_after
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import ResponseError
from reconcile.engine.status import status_action
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.controller import UpdateMethod
from reconcile.specs.errors import SpecError
from reconcile.specs.map_controller import OutputRule, parse_map_controller

PARENTS = ResourceInfo("example.com", "v1", "schedules", "Schedule", True, has_status=True)
PVCS = ResourceInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
SNAPSHOTS = ResourceInfo(
    "snapshot.storage.k8s.io", "v1", "volumesnapshots", "VolumeSnapshot", True, has_status=True
)


def spec(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "parentResource": {"apiVersion": "example.com/v1", "resource": "schedules"},
        "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
        "outputResources": [
            {"apiVersion": "snapshot.storage.k8s.io/v1", "resource": "volumesnapshots"}
        ],
        "hooks": {"map": {"webhook": {"url": "http://hooks/map"}}},
    }
    body.update(overrides)
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": "snap"},
        "spec": body,
    }


def test_the_spec_is_read_with_defaults() -> None:
    controller = parse_map_controller(spec(resyncPeriodSeconds=5))
    assert controller.parent.resource == "schedules"
    assert controller.inputs[0].resource == "persistentvolumeclaims"
    assert controller.outputs[0].update_method is UpdateMethod.ON_DELETE
    assert controller.hooks.tombstone is None and controller.resync_period == 5


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"parentResource": None}, "spec.parentResource", "is required"),
        ({"inputResources": []}, "spec.inputResources", "at least one"),
        ({"outputResources": None}, "spec.outputResources", "at least one"),
        (
            {"outputResources": [{"apiVersion": "v1", "resources": "configmaps"}]},
            "spec.outputResources[0].resources",
            "did you mean spec.outputResources[0].resource?",
        ),
        (
            {
                "outputResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "updateStrategy": {"method": "RollingInPlace"},
                    }
                ]
            },
            "spec.outputResources[0].updateStrategy.method",
            "is not one of OnDelete, Recreate, InPlace",
        ),
        (
            {
                "inputResources": [
                    {"apiVersion": "v1", "resource": "configmaps"},
                    {"apiVersion": "v1", "resource": "configmaps"},
                ]
            },
            "spec.inputResources[1]",
            "already listed at inputResources[0]",
        ),
        ({"hooks": {"tombstone": {"webhook": {"url": "http://x/"}}}}, "spec.hooks.map", "required"),
        ({"hooks": {"mapping": {}, "map": {"webhook": {"url": "x"}}}}, "spec.hooks.map", "url"),
        ({"hook": {}}, "spec.hook", "did you mean spec.hooks?"),
    ],
)
def test_spec_errors_name_the_field(overrides: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_map_controller(spec(**overrides), source="c.yaml#0")
    text = str(caught.value)
    assert "MapController snap (c.yaml#0)" in text and field in text and message in text


def obj(kind: str, name: str, uid: str, api_version: str = "v1", **meta: Any) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "uid": uid, **meta},
    }


PARENT: Obj = {
    **obj("Schedule", "s", "parent-uid", "example.com/v1", generation=3),
    "spec": {"selector": {"matchLabels": {"app": "db"}}},
}


def test_map_keys_are_stable_label_values_that_change_with_the_uid() -> None:
    pvc = obj("PersistentVolumeClaim", "data", "u1")
    key = map_key(pvc)
    assert key == map_key(dict(pvc)) and re.fullmatch(r"[0-9a-f]{40}", key)
    assert map_key(obj("PersistentVolumeClaim", "data", "u2")) != key
    assert map_key(obj("ConfigMap", "data", "u1")) != key
    assert map_key(obj("PersistentVolumeClaim", "data", "u1", "other.io/v1")) != key


def test_inputs_match_the_selector_and_never_include_the_parents_own_outputs() -> None:
    mine = obj(
        "PersistentVolumeClaim",
        "out",
        "u3",
        labels={"app": "db"},
        ownerReferences=[owner_reference(PARENT)],
    )
    others = obj("PersistentVolumeClaim", "b", "u2", labels={"app": "web"})
    selected = obj("PersistentVolumeClaim", "a", "u1", labels={"app": "db"})
    inputs = select_inputs(PARENT, input_selector(PARENT), [(PVCS, [selected, others, mine])])
    assert [i.name for i in inputs] == ["PersistentVolumeClaim ns/a"]
    everything = {**PARENT, "spec": {}}
    assert len(select_inputs(everything, input_selector(everything), [(PVCS, [selected])])) == 1
    with pytest.raises(SelectorProblem, match=r"spec.selector.matchExpressions\[0\].operator"):
        input_selector({**PARENT, "spec": {"selector": {"matchExpressions": [{"key": "a"}]}}})


def context(method: UpdateMethod = UpdateMethod.IN_PLACE, tombstone: bool = False) -> OutputContext:
    raw = spec()
    if tombstone:
        raw["spec"]["hooks"]["tombstone"] = {"webhook": {"url": "http://hooks/tombstone"}}
    controller = parse_map_controller(raw)
    output_types = (
        OutputType(OutputRule("v1", "configmaps", method), CONFIGMAPS),
        OutputType(OutputRule("snapshot.storage.k8s.io/v1", "volumesnapshots"), SNAPSHOTS),
    )
    return OutputContext(controller, PARENT, PARENTS, output_types)


def pvc(name: str) -> MapInput:
    item = obj("PersistentVolumeClaim", name, f"uid-{name}", labels={"app": "db"})
    return MapInput(PVCS, item, map_key(item))


def configmap(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def existing(item: MapInput | str, name: str, **data: str) -> Obj:
    """An output as the cluster holds it: labelled with its key, controlled by the parent."""
    key = item if isinstance(item, str) else item.key
    return {
        **configmap(name, **data),
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "labels": {MAP_KEY_LABEL: key},
            "annotations": {MAP_INPUT_ANNOTATION: "PersistentVolumeClaim ns/gone"},
            "ownerReferences": [owner_reference(PARENT)],
        },
    }


def no_lookup(kind: str, namespace: str, name: str) -> Obj | None:
    return None


def by_key(plans: list[Plan]) -> dict[str, Plan]:
    return {p.key: p for p in plans}


def kinds(plan: Plan) -> list[tuple[str, str]]:
    return [(a.kind.value, a.name) for a in plan.actions]


def test_a_key_creates_updates_and_deletes_its_own_outputs() -> None:
    a = pvc("a")
    observed = {a.key: {CONFIGMAPS.key: [existing(a, "a-old"), existing(a, "a-cfg", v="1")]}}
    live = [LiveKey(a, [configmap("a-cfg", v="2"), configmap("a-new")])]
    plan = by_key(plan_parent_outputs(context(), live, [], observed, no_lookup))[a.key]
    assert plan.problems == []
    assert kinds(plan) == [("delete", "a-old"), ("create", "a-new"), ("update", "a-cfg")]
    created = plan.actions[1].after
    assert created is not None
    assert created["metadata"]["labels"] == {MAP_KEY_LABEL: a.key}
    assert created["metadata"]["annotations"][MAP_INPUT_ANNOTATION] == "PersistentVolumeClaim ns/a"
    assert created["metadata"]["namespace"] == "ns"
    assert created["metadata"]["ownerReferences"] == [owner_reference(PARENT)]
    assert {a.group for a in plan.actions} == {"PersistentVolumeClaim ns/a"}


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        (UpdateMethod.ON_DELETE, []),
        (UpdateMethod.RECREATE, [("delete", "a-cfg")]),
        (UpdateMethod.IN_PLACE, [("update", "a-cfg")]),
    ],
)
def test_update_methods(method: UpdateMethod, expected: list[tuple[str, str]]) -> None:
    a = pvc("a")
    observed = {a.key: {CONFIGMAPS.key: [existing(a, "a-cfg", v="1")]}}
    live = [LiveKey(a, [configmap("a-cfg", v="2")])]
    plan = plan_parent_outputs(context(method), live, [], observed, no_lookup)[0]
    assert kinds(plan) == expected


def test_a_name_two_keys_want_stops_both_and_names_both_inputs() -> None:
    a, b, c = pvc("a"), pvc("b"), pvc("c")
    observed = {a.key: {CONFIGMAPS.key: [existing(a, "a-old")]}}
    live = [
        LiveKey(a, [configmap("shared")]),
        LiveKey(b, [configmap("shared")]),
        LiveKey(c, [configmap("c-cfg")]),
    ]
    plans = by_key(plan_parent_outputs(context(), live, [], observed, no_lookup))
    for key in (a.key, b.key):
        assert plans[key].actions == []
        assert plans[key].problems == [
            "ConfigMap ns/shared is an output of both PersistentVolumeClaim ns/a and "
            "PersistentVolumeClaim ns/b"
        ]
    assert kinds(plans[c.key]) == [("create", "c-cfg")]


def test_a_name_another_key_holds_is_a_problem_or_a_wait_while_it_is_deleted() -> None:
    a, b = pvc("a"), pvc("b")
    held = {b.key: {CONFIGMAPS.key: [existing(b, "cfg")]}}
    # b still wants it: a problem for a
    plans = by_key(
        plan_parent_outputs(
            context(),
            [LiveKey(a, [configmap("cfg")]), LiveKey(b, [configmap("cfg")])],
            [],
            held,
            no_lookup,
        )
    )
    assert plans[a.key].problems and plans[b.key].problems
    # b lets it go this pass: a waits for the delete
    plans = by_key(
        plan_parent_outputs(
            context(), [LiveKey(a, [configmap("cfg")]), LiveKey(b, [])], [], held, no_lookup
        )
    )
    assert kinds(plans[b.key]) == [("delete", "cfg")]
    assert plans[a.key].actions == [] and "is deleted before it is created" in plans[a.key].waits[0]
    # b's hook failed (not planned): the name stays b's
    plans = by_key(
        plan_parent_outputs(context(), [LiveKey(a, [configmap("cfg")])], [], held, no_lookup)
    )
    assert (
        "is an output of both PersistentVolumeClaim ns/a and PersistentVolumeClaim ns/gone"
        in (plans[a.key].problems[0])
    )


def test_objects_that_are_not_the_parents_outputs_are_never_taken() -> None:
    a = pvc("a")
    foreign = {**configmap("cfg"), "metadata": {"name": "cfg", "namespace": "ns", "uid": "x"}}

    def lookup(kind: str, namespace: str, name: str) -> Obj | None:
        return foreign if (namespace, name) == ("ns", "cfg") else None

    plan = plan_parent_outputs(context(), [LiveKey(a, [configmap("cfg")])], [], {}, lookup)[0]
    assert plan.actions == []
    assert plan.problems == [
        "ConfigMap ns/cfg exists and is not an output of this parent; outputs are never adopted"
    ]


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}, "outputResources"),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "x"}},
            "is not the parent's namespace",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "c",
                    "ownerReferences": [{"uid": "other", "controller": True}],
                },
            },
            "names another controller",
        ),
        ({**configmap("c"), "data": {"big": "x" * 300_000}}, "256 KiB"),
    ],
)
def test_unusable_outputs_stop_their_key(output: Obj, problem: str) -> None:
    a = pvc("a")
    observed = {a.key: {CONFIGMAPS.key: [existing(a, "keep-me")]}}
    plan = plan_parent_outputs(context(), [LiveKey(a, [output])], [], observed, no_lookup)[0]
    assert plan.actions == [] and problem in plan.problems[0]


def test_detached_outputs_are_deleted_unless_the_tombstone_hook_keeps_them() -> None:
    gone = "0" * 40
    observed = {gone: {CONFIGMAPS.key: [existing(gone, "one"), existing(gone, "two")]}}
    keep = [configmap("two")]
    plan = plan_parent_outputs(
        context(tombstone=True),
        [],
        [DetachedKey(gone, "PersistentVolumeClaim ns/gone", keep)],
        observed,
        no_lookup,
    )[0]
    assert kinds(plan) == [("delete", "one")]
    assert plan.actions[0].reason == "its input is gone, not kept by the tombstone hook"
    everything = plan_parent_outputs(
        context(), [], [DetachedKey(gone, "x", [])], observed, no_lookup
    )[0]
    assert kinds(everything) == [("delete", "one"), ("delete", "two")]
    # keeping something that is not one of the group's outputs: nothing is deleted
    wrong = plan_parent_outputs(
        context(tombstone=True),
        [],
        [DetachedKey(gone, "x", [configmap("three")])],
        observed,
        no_lookup,
    )[0]
    assert wrong.actions == [] and "is not one of the outputs of x" in wrong.problems[0]


def test_hook_answers_are_checked() -> None:
    assert parse_outputs({"outputs": None}, "map") == []
    for bad, problem in (
        ([], "must be a JSON object"),
        ({"outputs": {}}, "outputs: must be a list"),
        ({"outputs": [{"kind": "ConfigMap"}]}, "outputs[0].apiVersion: is required"),
    ):
        with pytest.raises(ResponseError, match=re.escape(problem)):
            parse_outputs(bad, "map")


def test_status_counts_inputs_outputs_and_true_conditions() -> None:
    a = pvc("a")
    ready = {**existing(a, "x"), "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    stale = {
        **existing(a, "y"),
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "Synced", "status": "True"},
            ]
        },
    }
    ctx = context()
    observed = outputs_by_key(ctx.owned, {CONFIGMAPS.key: [ready, stale]})
    status = aggregated_status([PVCS], [a], ctx.owned, observed)
    assert status == {
        "persistentvolumeclaims": {"total": 1},
        "configmaps": {"total": 2, "ready": 1, "synced": 1},
        "volumesnapshots": {"total": 0},
    }
    # a resource both in and out keeps both figures
    inputs = [MapInput(CONFIGMAPS, i.obj, i.key) for i in (a, pvc("b"))]
    both = aggregated_status([CONFIGMAPS], inputs, ctx.owned, observed)
    assert both["configmaps"] == {"total": 2, "ready": 1, "synced": 1, "inputs": 2}
    action = status_action(PARENTS, PARENT, status, "aggregated status")
    assert action is not None and action.kind is ActionKind.STATUS
    assert action.after is not None and action.after["status"]["observedGeneration"] == 3
    converged = {**PARENT, "status": {**status, "observedGeneration": 3}}
    assert status_action(PARENTS, converged, status, "aggregated status") is None


def test_the_status_counts_what_the_pass_made() -> None:
    a = pvc("a")
    ctx = context()
    observed = {a.key: {CONFIGMAPS.key: [existing(a, "old")]}}
    plan = plan_parent_outputs(
        ctx, [LiveKey(a, [configmap("new1"), configmap("new2")])], [], observed, no_lookup
    )[0]
    after = outputs_after(ctx.owned, observed, plan.actions)
    assert aggregated_status([PVCS], [a], ctx.owned, after)["configmaps"] == {"total": 2}
