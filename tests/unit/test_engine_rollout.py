"""Rolling updates (reconcile.engine.composite.rollout), with plain dicts.

Most tests step a rollout call by call against a small simulated cluster: each pass runs the
two decision steps exactly as a pass does (plan_revisions, one "sync hook" call per live
revision, plan_rollout, then sync.plan_parent on the merged response), applies the
actions to the simulated state (revision writes first), and acts as the kubelet in between
(marking children Ready)."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.composite.revisions import (
    REVISION_RESOURCE,
    Revision,
    parent_patch,
    revision_name,
    selector_labels,
)
from reconcile.engine.composite.rollout import (
    ChildRef,
    Move,
    RolloutPlan,
    apply_child_types,
    effective_method,
    plan_rollout,
    rollout_response,
    set_condition,
)
from reconcile.engine.composite.rollout_revisions import RevisionPlan, plan_revisions
from reconcile.engine.composite.sync import ChildType, claim_children, plan_parent
from reconcile.engine.composite.sync import ParentContext as Context
from reconcile.engine.finalizers import Mode
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import PlanError, SyncResponse
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, is_deleting, metadata, name_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.specs.composite import (
    ChildRule,
    CompositeController,
    CompositeHooks,
    ConditionCheck,
    ParentRule,
)
from reconcile.specs.controller import UpdateMethod
from reconcile.specs.hooks import CommandSpec, HookSpec

NS = "default"
UID = "parent-uid"
APP = {"app": "web"}
SELECTOR = LabelSelector.from_labels(APP)
THINGS = ResourceInfo("example.com", "v1", "things", "Thing", namespaced=True, has_status=True)
PODS = ResourceInfo("", "v1", "pods", "Pod", namespaced=True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
SECRETS = ResourceInfo("", "v1", "secrets", "Secret", namespaced=True)
POD = PODS.key
CM = CONFIGMAPS.key
READY = ConditionCheck("Ready", "True")
RRC = UpdateMethod.ROLLING_RECREATE
RIP = UpdateMethod.ROLLING_IN_PLACE
TEMPLATE = ("spec.template",)

CREATE, UPDATE, DELETE = ActionKind.CREATE, ActionKind.UPDATE, ActionKind.DELETE


def patch_for(image: str) -> dict[str, Any]:
    return {"spec": {"template": {"image": image}}}


def rev(image: str) -> str:
    """The revision name of the parent with this image (field paths spec.template)."""
    return revision_name(THINGS, UID, patch_for(image))


def make_parent(image: str = "a", replicas: int = 3, **spec: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "web", "namespace": NS, "uid": UID, "generation": 1},
        "spec": {
            "selector": {"matchLabels": APP},
            "replicas": replicas,
            "template": {"image": image},
            **spec,
        },
    }


def complete(obj: Obj, parent: Obj) -> Obj:
    """What composite.py's validation makes of a hook's child: namespace and owner ref."""
    obj["metadata"]["namespace"] = NS
    obj["metadata"]["ownerReferences"] = [owner_reference(parent)]
    return obj


def hook(parent: Obj) -> dict[str, dict[str, Obj]]:
    """A sync hook: `replicas` pods running the template's image, and one ConfigMap."""
    image = parent["spec"]["template"]["image"]
    pods = {
        f"web-{i}": complete(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"web-{i}", "labels": dict(APP)},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
            parent,
        )
        for i in range(parent["spec"]["replicas"])
    }
    config = complete(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web-config", "labels": dict(APP)},
            "data": {"image": image},
        },
        parent,
    )
    return {POD: pods, CM: {"web-config": config}}


def image_of(pod: Obj) -> str:
    return str(pod["spec"]["containers"][0]["image"])


def make_types(
    method: UpdateMethod = RRC,
    checks: tuple[ConditionCheck, ...] = (READY,),
    configmaps: UpdateMethod = UpdateMethod.IN_PLACE,
) -> tuple[ChildType, ...]:
    return (
        ChildType(ChildRule("v1", "pods", method, checks), PODS),
        ChildType(ChildRule("v1", "configmaps", configmaps), CONFIGMAPS),
    )


def make_controller(types: tuple[ChildType, ...]) -> CompositeController:
    sync = HookSpec(name="sync", owner="CompositeController web", command=CommandSpec(("true",)))
    return CompositeController(
        name="web",
        parent=ParentRule("example.com/v1", "things", LabelSelector()),
        children=tuple(t.rule for t in types),
        hooks=CompositeHooks(sync=sync),
        raw={"kind": "CompositeController", "metadata": {"name": "web"}},
    )


@dataclass
class Decision:
    revisions: RevisionPlan
    rollout: RolloutPlan
    children: list[Action]  # what composite.plan_parent decided, in order

    @property
    def actions(self) -> list[Action]:
        """Everything, in execution order: the revision writes first."""
        return self.rollout.writes + self.children

    def writes(self) -> list[tuple[ActionKind, str]]:
        return [(a.kind, a.name) for a in self.rollout.writes]

    def child_actions(self) -> list[tuple[ActionKind, str]]:
        return [(a.kind, a.name) for a in self.children if a.kind is not ActionKind.STATUS]

    @property
    def reason(self) -> str:
        return self.rollout.condition["reason"]

    @property
    def message(self) -> str:
        return self.rollout.condition["message"]

    def moved(self) -> list[str]:
        return [m.child.name for m in self.rollout.moves]


class Sim:
    """The cluster between passes: the parent, its revisions and its children."""

    def __init__(
        self,
        parent: Obj | None = None,
        *,
        types: tuple[ChildType, ...] | None = None,
        field_paths: tuple[str, ...] = TEMPLATE,
        move_unchanged: bool = True,
    ) -> None:
        self.parent = parent if parent is not None else make_parent()
        self.types = types if types is not None else make_types()
        self.field_paths = field_paths
        self.move_unchanged = move_unchanged
        self.revisions: dict[str, Obj] = {}
        self.children: dict[str, dict[str, Obj]] = {t.key: {} for t in self.types}
        self.counter = itertools.count(1)
        self.hook_calls: list[list[str]] = []
        self.descending = False  # the hook lists its children last first (as CatSet's does)

    # -- the two decision steps, as the runner calls them

    def decide(self) -> Decision:
        labels = selector_labels(SELECTOR)
        plan = plan_revisions(
            self.parent,
            THINGS,
            self.field_paths,
            list(self.revisions.values()),
            self.types,
            labels,
        )
        desired = {live.name: hook(live.parent) for live in plan.live}
        self.hook_calls.append(list(desired))
        listed = [(key, name) for key, objs in desired[plan.latest.name].items() for name in objs]
        rollout = plan_rollout(
            plan,
            desired,
            self.children,
            self.types,
            move_unchanged=self.move_unchanged,
            hook_order=list(reversed(listed)) if self.descending else listed,
        )
        responses = {
            name: SyncResponse(
                status={"replicas": 3},
                children=[obj for objects in children.values() for obj in objects.values()],
            )
            for name, children in desired.items()
        }
        ctx = Context(
            make_controller(self.types), self.parent, THINGS, apply_child_types(self.types)
        )
        candidates = {key: list(objects.values()) for key, objects in self.children.items()}
        claims = claim_children(ctx, SELECTOR, candidates)
        children = plan_parent(
            ctx, Mode.SYNC, SELECTOR, claims, rollout_response(rollout, responses)
        )
        return Decision(plan, rollout, children.actions)

    # -- acting as the API server

    def execute(self, actions: list[Action]) -> None:
        for action in actions:
            if action.resource == REVISION_RESOURCE:
                self._write(self.revisions, action, generation=False)
            elif action.kind is ActionKind.STATUS:
                assert action.after is not None
                self.parent = copy.deepcopy(action.after)
            else:
                self._write(self.children[action.resource.key], action, generation=True)

    def _write(self, store: dict[str, Obj], action: Action, *, generation: bool) -> None:
        n = next(self.counter)
        if action.kind is DELETE:
            assert action.before is not None
            current = store[action.name]
            assert metadata(current)["uid"] == metadata(action.before)["uid"]  # precondition
            del store[action.name]
            return
        obj = copy.deepcopy(action.after)
        assert obj is not None
        meta = obj["metadata"]
        if action.kind is CREATE:
            assert action.name not in store, f"{action.name} already exists"
            meta["uid"] = f"uid-{n}"
            meta["creationTimestamp"] = f"2024-01-01T00:{n // 60:02d}:{n % 60:02d}Z"
            if generation:
                meta["generation"] = 1
        else:
            current = store[action.name]
            assert meta["resourceVersion"] == metadata(current)["resourceVersion"], "conflict"
            if generation:
                changed = not json_equal(obj.get("spec"), current.get("spec"))
                meta["generation"] = metadata(current)["generation"] + int(changed)
            obj["status"] = copy.deepcopy(current.get("status"))
        meta["resourceVersion"] = str(n)
        store[action.name] = obj

    def step(self, *, ready: bool = True) -> Decision:
        decision = self.decide()
        self.execute(decision.actions)
        if ready:
            self.mark_ready()
        return decision

    # -- acting as the kubelet and the children's controllers

    def mark_ready(self, *names: str) -> None:
        for name, pod in self.children[POD].items():
            if names and name not in names:
                continue
            pod["status"] = {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": metadata(pod)["generation"],
            }

    def mark_not_ready(self, name: str) -> None:
        self.children[POD][name]["status"] = {"conditions": [{"type": "Ready", "status": "False"}]}

    def observe_generation(self, name: str, observed: int) -> None:
        pod = self.children[POD][name]
        pod["status"] = {**(pod.get("status") or {}), "observedGeneration": observed}

    # -- looking at the state

    def images(self) -> dict[str, str]:
        return {name: image_of(pod) for name, pod in sorted(self.children[POD].items())}

    def listed(self) -> dict[str, list[str]]:
        """Revision name -> the Pods it lists."""
        return {
            name: list(Revision.from_object(obj).names("", "Pod"))
            for name, obj in sorted(self.revisions.items())
        }

    def converge(self, limit: int = 30) -> list[Decision]:
        """Passes until one changes nothing."""
        decisions = []
        for _ in range(limit):
            decision = self.step()
            decisions.append(decision)
            if not [a for a in decision.actions if a.kind is not ActionKind.STATUS]:
                return decisions
        raise AssertionError("the rollout did not converge")


def started(image: str = "a", **kwargs: Any) -> Sim:
    """A parent with its children created and Ready, on one revision."""
    sim = Sim(make_parent(image), **kwargs)
    sim.converge()
    name = revision_name(THINGS, UID, parent_patch(sim.parent, sim.field_paths))
    assert sim.listed() == {name: ["web-0", "web-1", "web-2"]}
    return sim


def change(sim: Sim, **spec: Any) -> None:
    sim.parent["spec"] = {**sim.parent["spec"], **spec}
    sim.parent["metadata"]["generation"] += 1


# --- effective methods, conditions, responses ----------------------------------------------


@pytest.mark.parametrize(
    ("method", "effective"),
    [
        (UpdateMethod.ROLLING_RECREATE, UpdateMethod.RECREATE),
        (UpdateMethod.ROLLING_IN_PLACE, UpdateMethod.IN_PLACE),
        (UpdateMethod.IN_PLACE, UpdateMethod.IN_PLACE),
        (UpdateMethod.RECREATE, UpdateMethod.RECREATE),
        (UpdateMethod.ON_DELETE, UpdateMethod.ON_DELETE),
    ],
)
def test_effective_method(method: UpdateMethod, effective: UpdateMethod) -> None:
    assert effective_method(method) is effective
    (child_type,) = apply_child_types((ChildType(ChildRule("v1", "pods", method, (READY,)), PODS),))
    assert child_type.rule.update_method is effective
    assert child_type.rule.status_checks == (READY,)
    assert child_type.resource is PODS


UPDATED_TRUE = {"type": "Updated", "status": "True", "reason": "OnLatestRevision", "message": "m"}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (None, {"conditions": [UPDATED_TRUE]}),
        ({}, {"conditions": [UPDATED_TRUE]}),
        ({"replicas": 3}, {"replicas": 3, "conditions": [UPDATED_TRUE]}),
        (
            {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Updated"}]},
            {"conditions": [{"type": "Ready", "status": "True"}, UPDATED_TRUE]},
        ),
        ({"conditions": "broken"}, {"conditions": [UPDATED_TRUE]}),
    ],
)
def test_set_condition(status: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    before = copy.deepcopy(status)
    assert set_condition(status, UPDATED_TRUE) == expected
    assert status == before


def test_rollout_response_merges_the_revisions_responses() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    plan = plan_revisions(
        sim.parent, THINGS, TEMPLATE, list(sim.revisions.values()), sim.types, APP
    )
    desired = {live.name: hook(live.parent) for live in plan.live}
    rollout = plan_rollout(plan, desired, sim.children, sim.types)
    responses = {
        rev("b"): SyncResponse(
            status={"v": "b", "conditions": [{"type": "Updated", "status": "True"}]},
            resync_after=30,
            finalized=True,
        ),
        rev("a"): SyncResponse(status={"v": "a"}, resync_after=10, finalized=False),
    }
    response = rollout_response(rollout, responses)
    assert response.status == {"v": "b", "conditions": [rollout.condition]}
    assert response.resync_after == 10
    assert not response.finalized
    assert [name_of(c) for c in response.children] == ["web-0", "web-1", "web-2", "web-config"]
    assert [image_of(c) for c in response.children[:3]] == ["b", "a", "a"]
    assert rollout_response(
        rollout,
        {
            rev("b"): SyncResponse(resync_after=None, finalized=True),
            rev("a"): SyncResponse(resync_after=0, finalized=True),
        },
    ) == SyncResponse(
        status={"conditions": [rollout.condition]},
        children=response.children,
        resync_after=None,
        finalized=True,
    )


# --- step 1: the revisions -----------------------------------------------------------------


def revision_obj(
    image: str,
    pods: list[str],
    *,
    created: str = "2024-01-01T00:00:00Z",
    extra: dict[tuple[str, str], list[str]] | None = None,
) -> Obj:
    parent = make_parent(image)
    revision = Revision.new(THINGS, parent, patch_for(image)).with_children(
        {("", "Pod"): pods, **(extra or {})}
    )
    obj = revision.to_object(parent, THINGS, APP)
    obj["metadata"].update(uid=f"uid-{image}", resourceVersion="1", creationTimestamp=created)
    return obj


def test_plan_revisions_for_a_new_parent() -> None:
    parent = make_parent("a")
    plan = plan_revisions(parent, THINGS, TEMPLATE, [], make_types(), APP)
    assert plan.latest.name == rev("a")
    assert plan.latest.raw is None
    assert plan.latest.patch == patch_for("a")
    assert [(live.name, live.latest) for live in plan.live] == [(rev("a"), True)]
    assert plan.live[0].parent == parent
    assert plan.retired == ()
    assert {live.name: live.parent for live in plan.live} == {rev("a"): parent}


def test_plan_revisions_default_field_paths_are_spec() -> None:
    parent = make_parent("a")
    plan = plan_revisions(parent, THINGS, (), [], make_types(), APP)
    assert plan.field_paths == ("spec",)
    assert plan.latest.patch == parent_patch(parent, ["spec"])


def test_plan_revisions_live_and_retired() -> None:
    parent = make_parent("c", replicas=5)
    observed = [
        revision_obj("c", ["web-0"]),
        revision_obj("b", ["web-1", "web-2"], created="2024-01-01T00:00:02Z"),
        # web-2 is also listed in an older revision: the newer one wins
        revision_obj("a", ["web-2", "web-3"], created="2024-01-01T00:00:01Z"),
        # only children listed elsewhere, or of a non-rolling type: retired
        revision_obj("x", ["web-0", "web-1"], created="2024-01-01T00:00:00Z"),
        revision_obj("y", [], created="2024-01-01T00:00:04Z", extra={("", "ConfigMap"): ["cm"]}),
        revision_obj("z", []),
    ]
    plan = plan_revisions(parent, THINGS, TEMPLATE, observed, make_types(), APP)
    assert plan.latest.name == rev("c")
    assert plan.latest.raw is observed[0]
    assert [live.name for live in plan.live] == [rev("c"), rev("b"), rev("a")]
    assert [live.latest for live in plan.live] == [True, False, False]
    # what the sync hook sees for an older revision: its template, today's replicas
    assert plan.live[1].parent["spec"] == {**parent["spec"], "template": {"image": "b"}}
    assert plan.live[2].parent["spec"]["template"] == {"image": "a"}
    assert plan.live[2].parent["spec"]["replicas"] == 5
    assert plan.live[2].parent["metadata"] == parent["metadata"]
    assert sorted(r.name for r in plan.retired) == sorted([rev("x"), rev("y"), rev("z")])


def test_plan_revisions_merges_revisions_with_the_latest_patch() -> None:
    # e.g. revisions adopted from a parent that was deleted and created again (another uid)
    parent = make_parent("a")
    adopted = revision_obj("a", ["web-1"])
    adopted["metadata"]["name"] = "things.example.com-from-the-old-uid"
    adopted2 = revision_obj("a", ["web-2"])
    adopted2["metadata"]["name"] = "things.example.com-zzz"
    plan = plan_revisions(parent, THINGS, TEMPLATE, [adopted2, adopted], make_types(), APP)
    # no revision with the exact name: the first with an equal patch (by name) is the latest
    assert plan.latest.name == "things.example.com-from-the-old-uid"
    assert plan.latest.names("", "Pod") == ("web-1", "web-2")
    assert [r.name for r in plan.retired] == ["things.example.com-zzz"]
    # with the exact name present, it is the latest and every equal one is merged into it
    exact = revision_obj("a", ["web-0"])
    plan = plan_revisions(parent, THINGS, TEMPLATE, [adopted, exact, adopted2], make_types(), APP)
    assert plan.latest.name == rev("a")
    assert plan.latest.names("", "Pod") == ("web-0", "web-1", "web-2")
    assert [r.name for r in plan.retired] == [
        "things.example.com-from-the-old-uid",
        "things.example.com-zzz",
    ]


def test_plan_revisions_malformed_revision_is_a_plan_error() -> None:
    bad = revision_obj("b", ["web-0"])
    bad["children"] = [{"apiGroup": "", "kind": "Pod", "names": "web-0"}]
    with pytest.raises(PlanError) as info:
        plan_revisions(make_parent("a"), THINGS, TEMPLATE, [bad], make_types(), APP)
    assert info.value.problems == [
        f"ControllerRevision {rev('b')}: children[0].names: must be a list of strings"
    ]


def test_plan_rollout_needs_every_live_revisions_desired_children() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    plan = plan_revisions(
        sim.parent, THINGS, TEMPLATE, list(sim.revisions.values()), sim.types, APP
    )
    with pytest.raises(ValueError, match=rev("a")):
        plan_rollout(plan, {rev("b"): hook(sim.parent)}, sim.children, sim.types)


# --- creating, and a stable state ----------------------------------------------------------


def test_a_new_parent_creates_its_revision_before_its_children() -> None:
    sim = Sim(make_parent("a"))
    first = sim.step(ready=False)
    assert first.writes() == [(CREATE, rev("a"))]
    assert first.rollout.writes[0].reason == "the parent's new spec.template"
    assert first.child_actions() == [
        (CREATE, "web-0"),
        (CREATE, "web-1"),
        (CREATE, "web-2"),
        (CREATE, "web-config"),
    ]
    assert first.rollout.condition == {
        "type": "Updated",
        "status": "True",
        "reason": "OnLatestRevision",
        "message": f"latest ControllerRevision: {rev('a')}",
    }
    assert sim.listed() == {rev("a"): ["web-0", "web-1", "web-2"]}
    revision = sim.revisions[rev("a")]
    assert revision["parentPatch"] == patch_for("a")
    assert revision["metadata"]["labels"] == {
        "app": "web",
        "metacontroller.k8s.io/apiGroup": "example.com",
        "metacontroller.k8s.io/resource": "things",
    }
    assert revision["metadata"]["ownerReferences"] == [owner_reference(sim.parent)]
    # the parent's status carries the condition
    assert sim.parent["status"]["conditions"] == [first.rollout.condition]
    # nothing more to do, ready or not
    second = sim.step()
    assert second.actions == []
    assert second.rollout.summary.describe() == f"3/3 children on revision {rev('a')}"


# --- a rollout, call by call ---------------------------------------------------------------


def test_rolling_recreate_three_children_step_by_step() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    a, b = rev("a"), rev("b")
    # (moved, reason, message, revision writes, child actions, images after, listed after)
    steps: list[tuple[list[str], str, str, list[Any], list[Any], dict[str, str] | None, Any]] = [
        (
            ["web-0"],
            "RolloutProgressing",
            "updating Pod web-0",
            [(CREATE, b), (UPDATE, a)],
            # the ConfigMap (not rolling) follows the latest revision at once
            [(DELETE, "web-0"), (UPDATE, "web-config")],
            {"web-1": "a", "web-2": "a"},
            {a: ["web-1", "web-2"], b: ["web-0"]},
        ),
        (
            [],
            "RolloutWaiting",
            "waiting for Pod web-0 to be created",
            [],
            [(CREATE, "web-0")],
            {"web-0": "b", "web-1": "a", "web-2": "a"},
            {a: ["web-1", "web-2"], b: ["web-0"]},
        ),
        (
            ["web-1"],
            "RolloutProgressing",
            "updating Pod web-1",
            [(UPDATE, b), (UPDATE, a)],
            [(DELETE, "web-1")],
            {"web-0": "b", "web-2": "a"},
            {a: ["web-2"], b: ["web-0", "web-1"]},
        ),
        (
            [],
            "RolloutWaiting",
            "waiting for Pod web-1 to be created",
            [],
            [(CREATE, "web-1")],
            {"web-0": "b", "web-1": "b", "web-2": "a"},
            {a: ["web-2"], b: ["web-0", "web-1"]},
        ),
        (
            ["web-2"],
            "RolloutProgressing",
            "updating Pod web-2",
            # the old revision is left without children: deleted (after the latest's update)
            [(UPDATE, b), (DELETE, a)],
            [(DELETE, "web-2")],
            {"web-0": "b", "web-1": "b"},
            {b: ["web-0", "web-1", "web-2"]},
        ),
        (
            [],
            "OnLatestRevision",
            f"latest ControllerRevision: {b}",
            [],
            [(CREATE, "web-2")],
            {"web-0": "b", "web-1": "b", "web-2": "b"},
            {b: ["web-0", "web-1", "web-2"]},
        ),
        ([], "OnLatestRevision", f"latest ControllerRevision: {b}", [], [], None, None),
    ]
    for i, (moved, reason, message, writes, actions, images, listed) in enumerate(steps):
        decision = sim.step()
        got = (decision.moved(), decision.reason, decision.message)
        assert got == (moved, reason, message), f"step {i}"
        assert decision.writes() == writes, f"step {i}"
        assert decision.child_actions() == actions, f"step {i}"
        if images is not None:
            assert sim.images() == images, f"step {i}"
            assert sim.listed() == listed, f"step {i}"
    assert sim.children[CM]["web-config"]["data"] == {"image": "b"}
    assert sim.parent["status"]["conditions"][0]["status"] == "True"


def test_a_rollout_waits_for_the_status_checks() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step(ready=False)  # web-0 moved and deleted
    sim.step(ready=False)  # web-0 created at b, not Ready yet
    for _ in range(2):
        waiting = sim.step(ready=False)
        assert waiting.moved() == []
        assert waiting.actions == [] or all(a.kind is ActionKind.STATUS for a in waiting.actions)
        assert waiting.rollout.condition == {
            "type": "Updated",
            "status": "False",
            "reason": "RolloutWaiting",
            "message": "waiting for Pod web-0 to pass Ready=True",
        }
        assert waiting.rollout.waits == ["waiting for Pod web-0 to pass Ready=True"]
    sim.mark_not_ready("web-0")  # a Ready condition that is False is not enough
    assert sim.decide().message == "waiting for Pod web-0 to pass Ready=True"
    sim.mark_ready("web-0")
    assert sim.step().moved() == ["web-1"]


def test_without_status_checks_a_created_child_is_enough() -> None:
    sim = started("a", types=make_types(checks=()))
    change(sim, template={"image": "b"})
    sim.step(ready=False)
    assert sim.step(ready=False).message == "waiting for Pod web-0 to be created"
    assert sim.step(ready=False).moved() == ["web-1"]


def test_rolling_in_place_waits_for_observed_generation() -> None:
    sim = started("a", types=make_types(RIP))
    change(sim, template={"image": "b"})
    first = sim.step(ready=False)
    assert first.moved() == ["web-0"]
    assert first.child_actions() == [(UPDATE, "web-0"), (UPDATE, "web-config")]
    assert first.rollout.moves == [
        Move(ChildRef(POD, "Pod", "web-0"), rev("a"), rev("b"), UpdateMethod.IN_PLACE)
    ]
    assert sim.images() == {"web-0": "b", "web-1": "a", "web-2": "a"}
    assert metadata(sim.children[POD]["web-0"])["generation"] == 2
    # still Ready from before, but its controller has not seen the new spec yet
    waiting = sim.step(ready=False)
    assert (
        waiting.message == "waiting for Pod web-0 to observe generation 2 (observedGeneration is 1)"
    )
    sim.observe_generation("web-0", 2)
    progressing = sim.step(ready=False)
    assert progressing.moved() == ["web-1"]
    assert progressing.child_actions() == [(UPDATE, "web-1")]


def test_rolling_in_place_without_observed_generation_checks_status_only() -> None:
    sim = started("a", types=make_types(RIP))
    for pod in sim.children[POD].values():
        pod["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    change(sim, template={"image": "b"})
    sim.step(ready=False)
    assert sim.step(ready=False).moved() == ["web-1"]


def test_children_move_in_natural_name_order() -> None:
    sim = started("a", types=make_types(RIP))
    change(sim, replicas=12)
    sim.converge()
    change(sim, template={"image": "b"})
    order = [m for d in sim.converge() for m in d.moved()]
    assert order == [f"web-{i}" for i in range(12)]


def test_children_move_in_the_order_the_hook_lists_them() -> None:
    """Metacontroller rolls children in the order of the latest sync hook's answer: CatSet
    lists its Pods highest first, so web-11 is replaced first."""
    sim = started("a", types=make_types(RIP))
    sim.descending = True
    change(sim, replicas=12)
    sim.converge()
    change(sim, template={"image": "b"})
    order = [m for d in sim.converge() for m in d.moved()]
    assert order == [f"web-{i}" for i in reversed(range(12))]


# --- the intent rule -----------------------------------------------------------------------


@pytest.mark.parametrize("method", [RRC, RIP])
def test_killed_between_the_revision_write_and_the_child_action(method: UpdateMethod) -> None:
    sim = started("a", types=make_types(method))
    change(sim, template={"image": "b"})
    sim.converge()  # finish b: a clean start for the rollout to c
    change(sim, template={"image": "c"})
    first = sim.decide()
    assert first.moved() == ["web-0"]
    # the process dies after writing the revisions, before touching web-0
    sim.execute(first.rollout.writes)
    assert sim.listed() == {rev("b"): ["web-1", "web-2"], rev("c"): ["web-0"]}
    assert sim.images() == {"web-0": "b", "web-1": "b", "web-2": "b"}

    resumed = sim.decide()
    # the same child is finished, at the latest revision, and no other moves
    assert resumed.moved() == []
    assert resumed.writes() == []
    expected = (DELETE if method is RRC else UPDATE, "web-0")
    # (the ConfigMap's update was not sent either: it follows the latest revision)
    assert resumed.child_actions() == [expected, (UPDATE, "web-config")]
    assert image_of(resumed.rollout.desired[POD]["web-0"]) == "c"
    assert [image_of(p) for n, p in resumed.rollout.desired[POD].items() if n != "web-0"] == [
        "b",
        "b",
    ]
    assert resumed.rollout.condition["reason"] == "RolloutWaiting"
    assert resumed.message == "waiting for Pod web-0 to be updated"
    # and it goes on from there
    sim.execute(resumed.actions)
    sim.mark_ready()
    sim.converge()
    assert sim.images() == {"web-0": "c", "web-1": "c", "web-2": "c"}
    assert sim.listed() == {rev("c"): ["web-0", "web-1", "web-2"]}


def test_killed_between_the_two_revision_writes() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()  # web-0 on b
    decision = sim.decide()
    assert decision.writes() == [(UPDATE, rev("b")), (UPDATE, rev("a"))]
    sim.execute(decision.rollout.writes[:1])  # dies after recording web-1 on b only
    assert sim.listed() == {rev("a"): ["web-1", "web-2"], rev("b"): ["web-0", "web-1"]}
    resumed = sim.decide()
    # the latest revision wins: web-1 is finished there, the older listing is cleaned up
    assert resumed.rollout.owners[POD] == {"web-0": rev("b"), "web-1": rev("b"), "web-2": rev("a")}
    assert resumed.moved() == []
    assert resumed.writes() == [(UPDATE, rev("a"))]
    assert resumed.child_actions() == [(DELETE, "web-1")]
    assert resumed.message == "waiting for Pod web-1 to be updated"


def settled(sim: Sim) -> dict[str, bool]:
    """Per desired Pod: exists, not being deleted, Ready, and running the image of the revision
    it is recorded in (the latest when recorded nowhere; the latest wins)."""
    latest = revision_name(THINGS, UID, parent_patch(sim.parent, TEMPLATE))
    revisions = [Revision.from_object(obj) for obj in sim.revisions.values()]
    revisions.sort(key=lambda r: r.name != latest)
    result = {}
    for i in range(sim.parent["spec"]["replicas"]):
        name = f"web-{i}"
        owner = next((r for r in revisions if name in r.names("", "Pod")), None)
        image = (
            owner.patch["spec"]["template"]["image"]
            if owner
            else sim.parent["spec"]["template"]["image"]
        )
        pod = sim.children[POD].get(name)
        result[name] = (
            pod is not None
            and not is_deleting(pod)
            and image_of(pod) == image
            and pod.get("status", {}).get("conditions") == [{"type": "Ready", "status": "True"}]
        )
    return result


def kill_points(sim: Sim) -> Iterator[int]:
    """Every prefix length of the next decision's actions (all of them: not killed)."""
    return iter(range(len(sim.decide().actions) + 1))


@pytest.mark.parametrize("method", [RRC, RIP])
@pytest.mark.parametrize("kill_at_pass", range(6))
@pytest.mark.parametrize("then_change", [False, True])
def test_killed_anywhere_never_disrupts_two_children_and_always_finishes(
    method: UpdateMethod, kill_at_pass: int, then_change: bool
) -> None:
    """For every pass and every point inside it: run the pass only up to that action (the
    process dies), optionally change the parent again, then go on with fresh decisions. At no
    time are two children disrupted, and the rollout always completes."""
    base = started("a", types=make_types(method))
    change(base, template={"image": "b"})
    for _ in range(kill_at_pass):
        base.step()
    final = "c" if then_change else "b"
    for cut in kill_points(base):
        sim = copy.deepcopy(base)
        sim.execute(sim.decide().actions[:cut])
        sim.mark_ready()
        if then_change:
            change(sim, template={"image": "c"})
        for _ in range(20):
            assert sum(not ok for ok in settled(sim).values()) <= 1, (cut, sim.listed())
            decision = sim.step(ready=False)
            assert sum(m.changed for m in decision.rollout.moves) <= 1
            assert sum(not ok for ok in settled(sim).values()) <= 1, (cut, sim.listed())
            sim.mark_ready()
        assert sim.images() == {"web-0": final, "web-1": final, "web-2": final}
        assert sim.listed() == {rev(final): ["web-0", "web-1", "web-2"]}


# --- level-triggered: a new parent change mid-rollout --------------------------------------


def test_a_parent_change_mid_rollout_skips_the_obsolete_revision() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()  # web-0 moved to b and deleted
    sim.step()  # web-0 created at b
    assert sim.listed() == {rev("a"): ["web-1", "web-2"], rev("b"): ["web-0"]}

    change(sim, template={"image": "c"})
    first = sim.step()
    # the hook is called for c (latest), b and a (both still have children)
    assert sim.hook_calls[-1] == [rev("c"), rev("b"), rev("a")]
    assert first.moved() == ["web-0"]
    assert first.rollout.moves[0].from_revision == rev("b")
    # b lost its only child: deleted, after the latest is created and before any child action
    assert first.writes() == [(CREATE, rev("c")), (DELETE, rev("b"))]
    assert sim.listed() == {rev("a"): ["web-1", "web-2"], rev("c"): ["web-0"]}

    seen: set[str] = set()
    for decision in sim.converge():
        seen |= {r.name for r in decision.revisions.live}
        for m in decision.rollout.moves:
            assert (m.from_revision, m.to_revision) == (rev("a"), rev("c"))
    assert rev("b") not in seen  # never rolled through
    assert sim.images() == {"web-0": "c", "web-1": "c", "web-2": "c"}
    assert sim.listed() == {rev("c"): ["web-0", "web-1", "web-2"]}


def test_a_parent_change_moves_the_child_that_is_mid_update_first() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    sim.step()  # web-1 moved to b and deleted: down right now
    assert "web-1" not in sim.children[POD]
    change(sim, template={"image": "c"})
    decision = sim.step()
    # web-0 (b, Ready) would be next by name, but web-1 is down anyway: it goes to c directly
    assert decision.moved() == ["web-1"]
    assert decision.child_actions() == [(CREATE, "web-1"), (UPDATE, "web-config")]
    assert sim.images() == {"web-0": "b", "web-1": "c", "web-2": "a"}


def test_rollback_to_a_revision_that_still_has_children() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()  # web-0 on b
    change(sim, template={"image": "a"})
    decision = sim.step()
    # a is the latest again (same name), web-0 goes back to it; b is deleted
    assert decision.revisions.latest.name == rev("a")
    assert decision.moved() == ["web-0"]
    assert decision.writes() == [(UPDATE, rev("a")), (DELETE, rev("b"))]
    sim.converge()
    assert sim.images() == {"web-0": "a", "web-1": "a", "web-2": "a"}
    assert sim.listed() == {rev("a"): ["web-0", "web-1", "web-2"]}


# --- scaling during a rollout --------------------------------------------------------------


def test_scale_up_mid_rollout_creates_new_children_at_the_latest_revision() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()  # web-0 on b
    change(sim, replicas=5)  # not a rolling field (spec.template only)
    decision = sim.step(ready=False)
    assert decision.child_actions() == [(CREATE, "web-3"), (CREATE, "web-4")]
    assert decision.writes() == [(UPDATE, rev("b"))]
    assert sim.listed() == {rev("a"): ["web-1", "web-2"], rev("b"): ["web-0", "web-3", "web-4"]}
    assert sim.images() == {"web-0": "b", "web-1": "a", "web-2": "a", "web-3": "b", "web-4": "b"}
    # the new children are on the latest revision: the rollout waits for them too
    assert decision.message == "waiting for Pod web-3 to be created"
    assert sim.decide().message == "waiting for Pod web-3 to pass Ready=True"
    sim.mark_ready()
    sim.converge()
    assert set(sim.images().values()) == {"b"}
    assert sim.listed() == {rev("b"): [f"web-{i}" for i in range(5)]}


def test_scale_down_mid_rollout_deletes_children_wherever_they_are() -> None:
    sim = started("a")
    change(sim, replicas=4)
    sim.converge()
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()  # web-0 on b; web-1..3 on a
    change(sim, replicas=1)
    decision = sim.step()
    assert decision.child_actions() == [(DELETE, "web-1"), (DELETE, "web-2"), (DELETE, "web-3")]
    # a is left without children: deleted (before the children are)
    assert decision.writes() == [(DELETE, rev("a"))]
    assert decision.rollout.condition["reason"] == "OnLatestRevision"
    assert sim.listed() == {rev("b"): ["web-0"]}
    assert sim.images() == {"web-0": "b"}


def test_scale_down_of_a_child_on_the_latest_revision() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    sim.step()
    sim.step()  # web-0, web-1 on b; web-2 on a
    change(sim, replicas=2)
    decision = sim.step()
    assert decision.child_actions() == [(DELETE, "web-2")]
    assert decision.writes() == [(DELETE, rev("a"))]
    change(sim, replicas=1)
    decision = sim.step()
    assert decision.child_actions() == [(DELETE, "web-1")]
    assert decision.writes() == [(UPDATE, rev("b"))]
    assert sim.listed() == {rev("b"): ["web-0"]}


# --- children deleted by someone else ------------------------------------------------------


def test_a_child_deleted_by_someone_else_is_recreated_at_its_own_revision() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step(ready=False)  # web-0 on b, not Ready: the rollout is paused
    del sim.children[POD]["web-2"]  # a node drain
    decision = sim.step(ready=False)
    assert decision.moved() == []
    assert decision.child_actions() == [(CREATE, "web-2")]
    assert sim.images()["web-2"] == "a"  # its own revision, not the latest
    assert sim.listed() == {rev("a"): ["web-1", "web-2"], rev("b"): ["web-0"]}


def test_a_child_on_the_latest_revision_deleted_by_someone_else_blocks_until_recreated() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    del sim.children[POD]["web-0"]
    decision = sim.step(ready=False)
    assert decision.message == "waiting for Pod web-0 to be created"
    assert decision.child_actions() == [(CREATE, "web-0")]
    assert sim.images()["web-0"] == "b"


def test_a_deleting_child_blocks_the_rollout() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    sim.children[POD]["web-0"]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    decision = sim.decide()
    assert decision.message == "waiting for Pod web-0 to be deleted"
    assert decision.moved() == []


# --- children that need no change, and other child types -----------------------------------


def test_children_matching_the_latest_revision_move_without_being_touched() -> None:
    # fieldPaths spec: a change that does not affect the Pods is still a new revision
    sim = started("a", field_paths=("spec",))
    change(sim, note="hello")
    decision = sim.step()
    assert [(m.child.name, m.changed) for m in decision.rollout.moves] == [
        ("web-0", False),
        ("web-1", False),
        ("web-2", False),
    ]
    assert decision.child_actions() == []
    assert [kind for kind, _ in decision.writes()] == [CREATE, DELETE]
    assert decision.rollout.condition["reason"] == "OnLatestRevision"
    assert decision.rollout.summary.on_latest == 3


def test_move_unchanged_false_moves_them_one_at_a_time() -> None:
    sim = started("a", field_paths=("spec",), move_unchanged=False)
    change(sim, note="hello")
    moves = [[(m.child.name, m.changed) for m in d.rollout.moves] for d in sim.converge()]
    assert moves == [[("web-0", True)], [("web-1", True)], [("web-2", True)], []]


def test_non_rolling_child_types_are_not_recorded_in_revisions() -> None:
    sim = started("a", types=make_types(configmaps=UpdateMethod.RECREATE))
    assert sim.revisions[rev("a")]["children"] == [
        {"apiGroup": "", "kind": "Pod", "names": ["web-0", "web-1", "web-2"]}
    ]
    change(sim, template={"image": "b"})
    decision = sim.step()
    assert decision.child_actions() == [(DELETE, "web-0"), (DELETE, "web-config")]
    assert decision.rollout.owners == {
        POD: {"web-0": rev("b"), "web-1": rev("a"), "web-2": rev("a")}
    }


def test_a_child_type_that_stops_rolling_follows_the_latest_at_once() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    sim.types = make_types(UpdateMethod.IN_PLACE)
    decision = sim.step()
    assert decision.child_actions() == [(UPDATE, "web-1"), (UPDATE, "web-2")]
    # the revisions forget the Pods: the latest is kept (empty), the older one deleted
    assert decision.writes() == [(UPDATE, rev("b")), (DELETE, rev("a"))]
    assert sim.listed() == {rev("b"): []}


def test_two_rolling_child_types_share_one_gate() -> None:
    types = (
        ChildType(ChildRule("v1", "pods", RRC, (READY,)), PODS),
        ChildType(ChildRule("v1", "configmaps", RIP), CONFIGMAPS),
    )
    sim = started("a", types=types)
    assert sim.revisions[rev("a")]["children"] == [
        {"apiGroup": "", "kind": "ConfigMap", "names": ["web-config"]},
        {"apiGroup": "", "kind": "Pod", "names": ["web-0", "web-1", "web-2"]},
    ]
    change(sim, template={"image": "b"})
    moved = [m for d in sim.converge() for m in d.moved()]
    # child types in the controller's order, one child per pass
    assert moved == ["web-0", "web-1", "web-2", "web-config"]


# --- the revision writes -------------------------------------------------------------------


def test_revision_writes_come_first_and_in_order() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    sim.step()
    sim.step()
    change(sim, template={"image": "c"})
    decision = sim.decide()
    writes = decision.rollout.writes
    assert [(a.kind, a.name) for a in writes] == [(CREATE, rev("c")), (DELETE, rev("b"))]
    assert all(a.resource == REVISION_RESOURCE for a in writes)
    assert decision.actions[: len(writes)] == writes
    create, delete = writes
    assert create.after is not None
    assert create.after["children"] == [{"apiGroup": "", "kind": "Pod", "names": ["web-0"]}]
    assert delete.before is sim.revisions[rev("b")]  # its uid is the delete's precondition
    assert delete.reason == "no children left"
    # an update carries the observed resourceVersion and says what moved
    sim.execute(decision.actions)
    sim.mark_ready()
    sim.step()
    update_c, update_a = sim.decide().rollout.writes
    assert update_c.reason == "children +Pod web-1"
    assert update_a.reason == "children -Pod web-1"
    assert update_a.after is not None and update_a.before is not None
    assert (
        update_a.after["metadata"]["resourceVersion"]
        == (update_a.before["metadata"]["resourceVersion"])
    )


def test_an_orphaned_revision_is_adopted_by_a_write() -> None:
    sim = started("a")
    del sim.revisions[rev("a")]["metadata"]["ownerReferences"]
    decision = sim.decide()
    assert decision.writes() == [(UPDATE, rev("a"))]
    assert decision.rollout.writes[0].reason == "labels and owner reference"
    sim.execute(decision.actions)
    assert sim.revisions[rev("a")]["metadata"]["ownerReferences"] == [owner_reference(sim.parent)]
    assert sim.decide().writes() == []


def test_duplicate_revisions_of_the_latest_patch_are_merged_and_deleted() -> None:
    sim = started("a")
    duplicate = copy.deepcopy(sim.revisions[rev("a")])
    duplicate["metadata"]["name"] = "things.example.com-old-uid"
    duplicate["children"] = [{"apiGroup": "", "kind": "Pod", "names": ["web-2"]}]
    sim.revisions[rev("a")]["children"] = [
        {"apiGroup": "", "kind": "Pod", "names": ["web-0", "web-1"]}
    ]
    sim.revisions["things.example.com-old-uid"] = duplicate
    decision = sim.step()
    assert decision.writes() == [(UPDATE, rev("a")), (DELETE, "things.example.com-old-uid")]
    assert decision.rollout.writes[1].reason == "the latest revision's patch: merged into it"
    assert sim.listed() == {rev("a"): ["web-0", "web-1", "web-2"]}


def test_rollout_summary() -> None:
    sim = started("a")
    change(sim, template={"image": "b"})
    decision = sim.step()
    summary = decision.rollout.summary
    assert summary.latest == rev("b")
    assert (summary.on_latest, summary.total, summary.moved) == (1, 3, ("Pod web-0",))
    assert [(r.name, r.latest, r.children, r.write) for r in summary.revisions] == [
        (rev("b"), True, ("Pod web-0",), "create"),
        (rev("a"), False, ("Pod web-1", "Pod web-2"), "update"),
    ]
    assert summary.describe() == f"1/3 children on revision {rev('b')}; moving Pod web-0"
    waiting = sim.step().rollout.summary
    assert waiting.describe() == (
        f"1/3 children on revision {rev('b')}; waiting for Pod web-0 to be created"
    )
