"""A controller's finalizer (reconcile.engine.finalizers), with plain dicts: what a pass does
with a parent, for each kind's policy; when children are managed; the write before the hook's
and the removal after `finalized: true`."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.engine.actions import ActionKind
from reconcile.engine.finalizers import NO_FINALIZER, Finalizer, Mode
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo

OURS = "metacontroller.io/compositecontroller-web"
OTHER = "example.com/keep"
THINGS = ResourceInfo("example.com", "v1", "things", "Thing", True, has_status=True)
COMPOSITE = Finalizer(OURS, enabled=True)
COMPOSITE_WITHOUT_HOOK = Finalizer(OURS, enabled=False)
DECORATOR = Finalizer(OURS, enabled=True, sync_deleting=True)
DECORATOR_WITHOUT_HOOK = Finalizer(OURS, enabled=False, sync_deleting=True)


def parent(*finalizers: str, deleting: bool = False) -> Obj:
    meta: dict[str, Any] = {"name": "p", "namespace": "ns", "uid": "u"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta}


@pytest.mark.parametrize(
    ("finalizer", "obj", "selected", "mode"),
    [
        # alive and selected: synced, whoever the kind
        (COMPOSITE, parent(), True, Mode.SYNC),
        (DECORATOR, parent(), True, Mode.SYNC),
        (NO_FINALIZER, parent(), True, Mode.SYNC),
        # ours to finalize: deleted, or no longer selected (opted out)
        (COMPOSITE, parent(OURS, deleting=True), True, Mode.FINALIZE),
        (COMPOSITE, parent(OURS), False, Mode.FINALIZE),
        (DECORATOR, parent(OURS), False, Mode.FINALIZE),
        # our finalizer without a finalize hook: taken off
        (COMPOSITE_WITHOUT_HOOK, parent(OURS, deleting=True), True, Mode.REMOVE_FINALIZER),
        (COMPOSITE_WITHOUT_HOOK, parent(OURS), False, Mode.REMOVE_FINALIZER),
        (DECORATOR_WITHOUT_HOOK, parent(OURS), False, Mode.REMOVE_FINALIZER),
        # being deleted without ours: a composite's parent is left alone, a decorator's target
        # is still synced (Metacontroller calls its sync hook), a map's parent is left alone
        (COMPOSITE, parent(OTHER, deleting=True), True, Mode.SKIP),
        (DECORATOR, parent(OTHER, deleting=True), True, Mode.SYNC),
        (DECORATOR_WITHOUT_HOOK, parent(OURS, deleting=True), True, Mode.SYNC),
        (NO_FINALIZER, parent(OTHER, deleting=True), True, Mode.SKIP),
        # not selected and not ours: nothing to do
        (COMPOSITE, parent(OTHER), False, Mode.SKIP),
        (DECORATOR, parent(), False, Mode.SKIP),
    ],
)
def test_what_a_pass_does_with_a_parent(
    finalizer: Finalizer, obj: Obj, selected: bool, mode: Mode
) -> None:
    assert finalizer.mode(obj, selected) is mode


@pytest.mark.parametrize(
    ("finalizers", "deleting", "finalize_hook", "manages"),
    [
        ([], False, False, True),  # alive
        ([OURS], True, True, True),  # being finalized by us
        ([OTHER], True, True, False),  # our finalizer already removed: hands off
        ([OURS], True, False, False),  # no finalize hook
        ([OURS, "foregroundDeletion"], True, True, False),  # the collector is at work
        ([OURS, "orphan"], True, True, False),
    ],
)
def test_children_are_managed_only_while_the_parent_lives_or_is_ours_to_finalize(
    finalizers: list[str], deleting: bool, finalize_hook: bool, manages: bool
) -> None:
    obj = parent(*finalizers, deleting=deleting)
    assert Finalizer(OURS, enabled=finalize_hook).manages_children(obj) is manages


@pytest.mark.parametrize(
    ("finalizer", "obj", "mode", "wanted"),
    [
        (COMPOSITE, parent(OTHER), Mode.SYNC, True),
        (COMPOSITE, parent(OURS), Mode.SYNC, None),
        (COMPOSITE_WITHOUT_HOOK, parent(OURS, OTHER), Mode.SYNC, False),
        (COMPOSITE_WITHOUT_HOOK, parent(OTHER), Mode.SYNC, None),
        (COMPOSITE, parent(OURS, deleting=True), Mode.REMOVE_FINALIZER, False),
        (COMPOSITE, parent(OURS, deleting=True), Mode.FINALIZE, None),
        # a target being deleted never gets it (we may have taken it off already)
        (DECORATOR, parent(OTHER, deleting=True), Mode.SYNC, None),
        (DECORATOR_WITHOUT_HOOK, parent(OURS, deleting=True), Mode.SYNC, False),
        (NO_FINALIZER, parent(OTHER), Mode.SYNC, None),
    ],
)
def test_the_finalizer_is_added_or_taken_off_before_anything_else(
    finalizer: Finalizer, obj: Obj, mode: Mode, wanted: bool | None
) -> None:
    assert finalizer.wanted(obj, mode) is wanted
    actions = finalizer.sync(THINGS, obj, mode)
    if wanted is None:
        assert actions == []
        return
    (action,) = actions
    assert action.kind is (ActionKind.ADD_FINALIZER if wanted else ActionKind.REMOVE_FINALIZER)
    assert action.before is obj
    assert action.after is not None
    after = action.after["metadata"].get("finalizers", [])
    assert (OURS in after) is wanted
    assert (OTHER in after) is (OTHER in obj["metadata"].get("finalizers", []))


def test_the_finalizer_goes_once_the_finalize_hook_says_finalized() -> None:
    obj = parent(OURS, OTHER, deleting=True)
    assert COMPOSITE.release(THINGS, obj, Mode.FINALIZE, False, None) == []
    assert COMPOSITE.release(THINGS, obj, Mode.SYNC, True, None) == []
    (action,) = COMPOSITE.release(THINGS, obj, Mode.FINALIZE, True, None)
    assert action.kind is ActionKind.REMOVE_FINALIZER
    assert action.after is not None and action.after["metadata"]["finalizers"] == [OTHER]
    # from what an earlier write of the plan leaves (a decorator's target update)
    labelled = {**obj, "metadata": {**obj["metadata"], "labels": {"a": "1"}}}
    (action,) = DECORATOR.release(THINGS, obj, Mode.FINALIZE, True, labelled)
    assert action.before is obj
    assert action.after is not None and action.after["metadata"]["labels"] == {"a": "1"}
    # the last finalizer off: the field goes
    (action,) = COMPOSITE.release(THINGS, parent(OURS), Mode.FINALIZE, True, None)
    assert action.after is not None and "finalizers" not in action.after["metadata"]
